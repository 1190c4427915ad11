package gt

import (
	"context"
	"os"
	"testing"
	"github.com/mcpredict/mcpredict/gen"
)

func TestDump(t *testing.T) {
	f, _ := os.Create("/tmp/gt/s13.csv")
	gen.Write(context.Background(), f, gen.Config{Kind: "random", Seed: 13, Threads: 3, Vars: 2, Events: 43})
	f.Close()
}
