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
	if _, _, ran := Done(ctx, "a"); ran {
		t.Error("without WithOnce, Done reports a write")
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
	if v, err, ran := Done(ctx, "a"); !ran || v != 1 || err != err1 {
		t.Errorf("Done(a) = %v, %v, %v; want what the write returned", v, err, ran)
	}
	if _, _, ran := Done(ctx, "c"); ran {
		t.Error("Done reports a write of an alias that never ran")
	}
}
