package live

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// Shared reads a value once for all the subscriptions that ask for it by
// the same key: an event a thousand screens follow is one read, not a
// thousand. The key must hold everything the value depends on (the event,
// the company, the selection). The last size keys are kept, which covers
// the subscribers of the events in flight.
type Shared[T any] struct {
	loads *lru.Cache[string, *sharedLoad[T]]
}

type sharedLoad[T any] struct {
	done  chan struct{}
	value T
	err   error
}

// NewShared keeps the last size keys.
func NewShared[T any](size int) *Shared[T] {
	loads, err := lru.New[string, *sharedLoad[T]](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Shared[T]{loads: loads}
}

// Get returns what load reads for key, reading it once for all who ask
// alike; a failed read is not shared (the first reader's failure may be its
// own: its connection gone), each then reads for itself.
func (s *Shared[T]) Get(key string, load func() (T, error)) (T, error) {
	mine := &sharedLoad[T]{done: make(chan struct{})}
	first, found, _ := s.loads.PeekOrAdd(key, mine)
	if !found {
		mine.value, mine.err = load()
		close(mine.done)
		return mine.value, mine.err
	}
	<-first.done
	if first.err != nil {
		return load()
	}
	return first.value, nil
}
