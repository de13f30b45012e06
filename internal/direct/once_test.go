package direct

import (
	"context"
	"errors"
	"testing"
)

func TestOnceRunsEachAliasOnceAnOperation(t *testing.T) {
	writes := 0
	write := func() (int, error) { writes++; return writes, errors.New("refused") }

	ctx := context.Background()
	Once(ctx, "a", write)
	Once(ctx, "a", write)
	if writes != 2 {
		t.Fatalf("without WithOnce: %d writes, want each call to write", writes)
	}

	writes = 0
	ctx = WithOnce(ctx)
	first, err1 := Once(ctx, "a", write)
	again, err2 := Once(ctx, "a", write)
	other, _ := Once(ctx, "b", write)
	if writes != 2 || first != 1 || again != 1 || other != 2 || err1 == nil || err2 != err1 {
		t.Errorf("with WithOnce: %d writes, a gave %d (%v) then %d (%v), b gave %d; want a written once and answered alike",
			writes, first, err1, again, err2, other)
	}
	// gqlgen's executor asks through its field interceptor, as any.
	v, err := Once(ctx, "a", func() (any, error) { t.Error("a was written again"); return nil, nil })
	if v != 1 || err != err1 {
		t.Errorf("a asked again as any: %v, %v; want what the write returned", v, err)
	}
	called := false
	Once(ctx, "c", func() (any, error) { called = true; return nil, nil })
	if !called {
		t.Error("an alias that never ran was answered from the record")
	}
}
