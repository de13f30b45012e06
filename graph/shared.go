package graph

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// sharedLoads lets the subscriptions that receive one event with the same
// selection read its inventory once: a write to a property that a thousand
// screens follow is one read, not a thousand. Keyed by the event, the
// company (one company's read is never another's), the operation's text and
// variables, and the field's place in it. Bounded: the last maxSharedLoads
// keys are kept, which covers the subscribers of the events in flight.
type sharedLoads struct {
	mu    sync.Mutex
	loads map[string]*sharedLoad
	order []string
}

type sharedLoad struct {
	done chan struct{}
	inv  *ent.Inventory
	err  error
}

const maxSharedLoads = 256

// inventory returns what load reads for the event cursor under ctx's
// company and selection, reading it once for all who ask alike.
func (s *sharedLoads) inventory(ctx context.Context, cursor string, load func() (*ent.Inventory, error)) (*ent.Inventory, error) {
	company, err := tenant.CompanyFrom(ctx)
	op, fc := graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx)
	if err != nil || op == nil || fc == nil {
		return load()
	}
	vars, err := json.Marshal(op.Variables) // map keys sorted: the same variables, the same text
	if err != nil {
		return load()
	}
	key := cursor + "\x00" + company.String() + "\x00" + fc.Path().String() + "\x00" + op.RawQuery + "\x00" + string(vars)
	s.mu.Lock()
	if s.loads == nil {
		s.loads = map[string]*sharedLoad{}
	}
	l, found := s.loads[key]
	if !found {
		l = &sharedLoad{done: make(chan struct{})}
		s.loads[key] = l
		s.order = append(s.order, key)
		if len(s.order) > maxSharedLoads {
			delete(s.loads, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.mu.Unlock()
	if found {
		select {
		case <-l.done:
			if l.err != nil {
				return load() // the first reader's failure may be its own (its connection gone)
			}
			return l.inv, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.inv, l.err = load()
	close(l.done)
	return l.inv, l.err
}
