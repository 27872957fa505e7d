package config

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// minParallelNodes is the size of reference graph (variables, locals and
// blocks) from which blocks are evaluated concurrently: below it the
// goroutines cost more than they save.
const minParallelNodes = 256

// maxEvalWorkers bounds the goroutines that evaluate blocks.
const maxEvalWorkers = 8

// evalCaches are the caches of evaluation, shared by the loader's copies
// that evaluate blocks concurrently.
type evalCaches struct {
	mu sync.Mutex
	// groups holds groupValue's one-entry objects by the node they hold.
	groups map[*node]cty.Value
	// schemas holds bodySchema's results.
	schemas map[*BlockSchema]*hcl.BodySchema
}

// group returns the one-entry object m (d's value under its name), built
// once per node.
func (c *evalCaches) group(d *node, m map[string]cty.Value) cty.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.groups[d]; ok {
		return g
	}
	g := cty.ObjectVal(m)
	if c.groups == nil {
		c.groups = map[*node]cty.Value{}
	}
	c.groups[d] = g
	return g
}

// bodySchema returns b's HCL body schema, built once.
func (c *evalCaches) bodySchema(b *BlockSchema) *hcl.BodySchema {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[b]; ok {
		return s
	}
	if c.schemas == nil {
		c.schemas = map[*BlockSchema]*hcl.BodySchema{}
	}
	s := b.hclSchema()
	c.schemas[b] = s
	return s
}

// budgets counts what the evaluation has used of the configuration-wide
// limits (MaxTotalInstances, MaxForIterations, MaxEvalBytes).
type budgets struct {
	instances     atomic.Int64
	forIterations atomic.Int64
	// bytes is the sum of the sizes of the values measured (see meter).
	bytes atomic.Int64
}

// exceeded reports whether any budget is spent.
func (b *budgets) exceeded() bool {
	return b.instances.Load() > MaxTotalInstances || b.forIterations.Load() > MaxForIterations || b.bytes.Load() > MaxEvalBytes
}

// visitAll evaluates every node after the nodes it refers to, with the
// result (values, instances and diagnostics in order) of visiting them one
// by one in declaration order. It returns false when the evaluation must be
// done again one block at a time from a fresh parse (see below).
//
// A large configuration's blocks are evaluated concurrently: a block as
// soon as the blocks it refers to are, on one goroutine per processor
// (1,000 tenants wait only for their pools and priorities, 5,000 models
// only for their tenant), each by a copy of the loader that keeps its own
// diagnostics; the diagnostics are then appended in the order the
// one-by-one visit reaches the nodes. Should the evaluation spend a
// configuration-wide budget, which block went over depends on timing: the
// evaluation is then done again one block at a time, so that the
// diagnostic names the same block on every run. Evaluating a block frees
// its syntax (see evalNode), so that is a new load (loadFS), not a replay.
func (l *loader) visitAll() bool {
	seq := l.visitOrder()
	if workers := l.workersFor(len(seq)); workers > 1 {
		if !l.visitConcurrently(seq, workers) {
			return false
		}
		l.concurrent = true
		return true
	}
	for _, n := range seq {
		l.evalNode(n)
	}
	return true
}

// workersFor returns how many goroutines evaluate n nodes.
func (l *loader) workersFor(n int) int {
	w := l.workers
	if w == 0 {
		w = 1
		if n >= minParallelNodes {
			w = min(runtime.GOMAXPROCS(0), maxEvalWorkers)
		}
	}
	return min(w, n)
}

// traversalsOf returns the references of every node, found concurrently
// (one contiguous run of nodes per goroutine) for a large configuration:
// walking every expression of 6,000 blocks is a fifth of their evaluation.
func (l *loader) traversalsOf(nodes []*node) [][]hcl.Traversal {
	out := make([][]hcl.Traversal, len(nodes))
	inRuns(len(nodes), l.workersFor(len(nodes)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = nodes[i].traversals()
		}
	})
	return out
}

// inRuns calls run over [0, n) split into one contiguous run per worker,
// concurrently when there is more than one (at most workers runs).
func inRuns(n, workers int, run func(lo, hi int)) {
	if workers <= 1 || n <= 1 {
		run(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Go(func() { run(lo, min(lo+per, n)) })
	}
	wg.Wait()
}

// visitOrder returns the nodes still to evaluate in the order visit
// evaluates them: each after its dependencies, depth first from every node
// in declaration order.
func (l *loader) visitOrder() []*node {
	var seq []*node
	seen := map[*node]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n.state != 0 || seen[n] {
			return
		}
		seen[n] = true
		for _, d := range n.deps {
			walk(d)
		}
		seq = append(seq, n)
	}
	for _, n := range l.order {
		walk(n)
	}
	return seq
}

// visitConcurrently evaluates seq (in visit order) on workers goroutines,
// each node once the nodes it depends on are done, and appends every
// node's diagnostics in seq order. It returns false, having evaluated
// nothing further, as soon as a budget is spent.
func (l *loader) visitConcurrently(seq []*node, workers int) bool {
	index := make(map[*node]int, len(seq))
	for i, n := range seq {
		index[n] = i
	}
	waiting := make([]atomic.Int32, len(seq))
	dependents := make([][]int, len(seq))
	for i, n := range seq {
		for _, d := range n.deps {
			if j, ok := index[d]; ok {
				waiting[i].Add(1)
				dependents[j] = append(dependents[j], i)
			}
		}
	}
	// Every node is sent once, so the buffer never blocks a sender.
	ready := make(chan int, len(seq))
	for i := range seq {
		if waiting[i].Load() == 0 {
			ready <- i
		}
	}
	diags := make([]hcl.Diagnostics, len(seq))
	var left atomic.Int64
	left.Store(int64(len(seq)))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range ready {
				if !stop.Load() {
					t := *l
					t.diags = nil
					t.evalNode(seq[i])
					diags[i] = t.diags
					if l.spent.exceeded() {
						stop.Store(true)
					}
				}
				for _, j := range dependents[i] {
					if waiting[j].Add(-1) == 0 {
						ready <- j
					}
				}
				if left.Add(-1) == 0 {
					close(ready)
				}
			}
		})
	}
	wg.Wait()
	if stop.Load() {
		return false
	}
	for _, d := range diags {
		l.diags = append(l.diags, d...)
	}
	return true
}
