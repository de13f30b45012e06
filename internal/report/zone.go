package report

import (
	"time"
	_ "time/tzdata" // zones by name on any host, a bare container's included
)

// DefaultTimeZone is where the companies this service was made for are: a
// report shows its times there as well as in UTC, since a signature's hour
// is argued over in the hour its parties lived it.
const DefaultTimeZone = "America/Bogota"

// defaultZone is DefaultTimeZone's location, for a report given none.
var defaultZone = func() *time.Location {
	loc, err := time.LoadLocation(DefaultTimeZone)
	if err != nil {
		panic(err) // embedded by time/tzdata
	}
	return loc
}()

// stamp is a time as reports print it: in the report's zone (loc, the
// default when nil) and in UTC, to the minute; "-" for none. UTC shows
// UTC alone.
func stamp(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	utc := t.UTC().Format("2006-01-02 15:04 UTC")
	if loc == nil {
		loc = defaultZone
	}
	if loc == time.UTC {
		return utc
	}
	return t.In(loc).Format("2006-01-02 15:04") + " " + loc.String() + " (" + utc + ")"
}
