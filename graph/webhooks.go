package graph

// zeroIfNil is *p, or T's zero value when p is nil.
func zeroIfNil[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
