package files

import "time"

// ProbeEvery sets how often Refusing probes, until the test ends.
func ProbeEvery(t interface{ Cleanup(func()) }, d time.Duration) {
	was := probeEvery
	probeEvery = d
	t.Cleanup(func() { probeEvery = was })
}
