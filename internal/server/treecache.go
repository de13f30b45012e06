package server

import (
	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/metrics"
	"github.com/propertyrecords/inventory/internal/treecache"
)

// keepTreesCurrent drops a corrected inventory's kept trees when its event
// arrives, from whichever instance or command corrected it (the Hub hears
// every write to the database), and reports the cache on /metrics. The
// version in the cache's key already keeps a corrected tree from being
// served before then; dropping frees its memory.
func keepTreesCurrent(trees *treecache.Cache, hub *live.Hub, instruments *metrics.Metrics) {
	if trees == nil {
		return
	}
	if hub != nil {
		hub.Observe(func(ev *ent.RecordEvent) {
			if ev.Kind == recordevent.KindInventoryCorrected {
				trees.Drop(ev.InventoryID)
			}
		})
	}
	if instruments != nil {
		instruments.WatchTreeCache(func() metrics.TreeCache {
			s := trees.Stats()
			return metrics.TreeCache{Hits: s.Hits, Misses: s.Misses, Bytes: s.Bytes, Trees: s.Trees, MaxBytes: s.MaxBytes}
		})
	}
}
