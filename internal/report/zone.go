package report

import (
	"sync/atomic"
	"time"
	_ "time/tzdata" // zones by name on any host, a bare container's included
)

// DefaultTimeZone is where the companies this service was made for are: a
// report shows its times there as well as in UTC, since a signature's hour
// is argued over in the hour its parties lived it.
const DefaultTimeZone = "America/Bogota"

var zone atomic.Pointer[time.Location]

func init() {
	loc, err := time.LoadLocation(DefaultTimeZone)
	if err != nil {
		panic(err) // embedded by time/tzdata
	}
	zone.Store(loc)
}

// SetTimeZone sets the zone reports show times in, beside UTC (the
// INVENTORY_TIME_ZONE setting); UTC shows UTC alone.
func SetTimeZone(loc *time.Location) { zone.Store(loc) }

// TimeZone is the zone reports show times in.
func TimeZone() *time.Location { return zone.Load() }

// stamp is a time as reports print it: in the reports' zone and in UTC,
// to the minute; "-" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	utc := t.UTC().Format("2006-01-02 15:04 UTC")
	loc := zone.Load()
	if loc == time.UTC {
		return utc
	}
	return t.In(loc).Format("2006-01-02 15:04") + " " + loc.String() + " (" + utc + ")"
}
