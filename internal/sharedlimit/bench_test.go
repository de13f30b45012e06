package sharedlimit_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/propertyrecords/inventory/internal/auth"
	"github.com/propertyrecords/inventory/internal/sharedlimit"
)

// BenchmarkAllow is one rate-limit decision, in process and in Redis (one
// round trip to a redis-server on this machine): what each request pays
// for it, before the query's own work. cpu-µs/op is this process's CPU for
// it (redis-server's excluded): what it takes from the instance's
// throughput.
func BenchmarkAllow(b *testing.B) {
	rds := testdbRedis(b)
	for _, c := range []struct {
		name   string
		shared *sharedlimit.Redis
	}{{"per instance", nil}, {"redis", rds}} {
		l := auth.NewSharedLimiter(1e9, 1_000_000_000, c.shared)
		b.Run(c.name, func(b *testing.B) {
			before := cpuTime()
			for b.Loop() {
				if _, ok := l.Allow("caller"); !ok {
					b.Fatal("refused")
				}
			}
			b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
		})
		b.Run(c.name+" parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, ok := l.Allow("caller"); !ok {
						b.Error("refused")
						return
					}
				}
			})
		})
	}
}

// cpuTime is the CPU the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
