//go:build linux && cgo

package nvml

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/capacity"
	"github.com/gpuform/gpuform/engine/mig"
)

// fakeNode is an in-memory Node as the API server keeps it: annotations,
// a resource version bumped by every change, a history that watches replay
// from a resource version, and server-side apply's ownership of the agent's
// annotations (an owned annotation missing from the next apply is removed;
// an apply that changes nothing is not a change).
type fakeNode struct {
	mu      sync.Mutex
	rv      int
	ann     map[string]string
	deleted bool
	history []fakeVersion
	owned   map[string]bool
	notify  chan struct{}
	// breakGen counts the watches broken by breakWatches; a watch started
	// before ends with breakErr.
	breakGen int
	breakErr error
	// failGets makes the next Gets fail.
	failGets int
	gets     int
	watches  int
	// applies counts the agent's applies; states is every agentv1.AnnotMIGState value
	// they set, in order (a removal as "").
	applies    int
	states     []string
	agentState string
}

type fakeVersion struct {
	rv      int
	ann     map[string]string
	deleted bool
}

func newFakeNode(ann map[string]string) *fakeNode {
	f := &fakeNode{ann: map[string]string{}, owned: map[string]bool{}, notify: make(chan struct{})}
	maps.Copy(f.ann, ann)
	f.commit()
	return f
}

// commit records a change; f.mu is held (or f is new).
func (f *fakeNode) commit() {
	f.rv++
	f.history = append(f.history, fakeVersion{rv: f.rv, ann: maps.Clone(f.ann), deleted: f.deleted})
	close(f.notify)
	f.notify = make(chan struct{})
}

func (f *fakeNode) Get(ctx context.Context) (*agentv1.NodeInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.failGets > 0 {
		f.failGets--
		return nil, errors.New("connection refused")
	}
	if f.deleted {
		return nil, errors.New(`nodes "n" not found`)
	}
	return &agentv1.NodeInfo{ResourceVersion: strconv.Itoa(f.rv), Annotations: maps.Clone(f.ann)}, nil
}

func (f *fakeNode) Watch(ctx context.Context, resourceVersion string) (<-chan agentv1.NodeEvent, error) {
	from, err := strconv.Atoi(resourceVersion)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.watches++
	gen := f.breakGen
	f.mu.Unlock()
	out := make(chan agentv1.NodeEvent)
	go func() {
		defer close(out)
		next := from + 1
		for {
			f.mu.Lock()
			var ev *agentv1.NodeEvent
			if f.breakGen != gen {
				ev = &agentv1.NodeEvent{Err: f.breakErr}
			} else {
				for _, v := range f.history {
					if v.rv >= next {
						ev = &agentv1.NodeEvent{Deleted: v.deleted}
						if !v.deleted {
							ev.Node = &agentv1.NodeInfo{ResourceVersion: strconv.Itoa(v.rv), Annotations: maps.Clone(v.ann)}
						}
						next = v.rv + 1
						break
					}
				}
			}
			notify := f.notify
			f.mu.Unlock()
			if ev != nil {
				select {
				case out <- *ev:
				case <-ctx.Done():
					return
				}
				if ev.Err != nil {
					return
				}
				continue
			}
			select {
			case <-notify:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (f *fakeNode) Apply(ctx context.Context, annotations map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleted {
		return errors.New(`nodes "n" not found`)
	}
	f.applies++
	before := maps.Clone(f.ann)
	for k := range f.owned {
		if _, ok := annotations[k]; !ok {
			delete(f.ann, k)
		}
	}
	f.owned = map[string]bool{}
	for k, v := range annotations {
		f.ann[k] = v
		f.owned[k] = true
	}
	if st := annotations[agentv1.AnnotMIGState]; st != f.agentState {
		f.states = append(f.states, st)
		f.agentState = st
	}
	if !maps.Equal(before, f.ann) {
		f.commit()
	}
	return nil
}

// set changes annotations as gpuform would ("" removes one).
func (f *fakeNode) set(kv ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(f.ann, kv[i])
		} else {
			f.ann[kv[i]] = kv[i+1]
		}
	}
	f.commit()
}

// setDeleted deletes the node, or creates it again bare.
func (f *fakeNode) setDeleted(deleted bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = deleted
	f.ann, f.owned = map[string]string{}, map[string]bool{}
	f.commit()
}

// breakWatches ends every open watch with err.
func (f *fakeNode) breakWatches(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.breakGen++
	f.breakErr = err
	close(f.notify)
	f.notify = make(chan struct{})
}

func (f *fakeNode) get(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ann[key]
}

func (f *fakeNode) snapshot() (applies int, states []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applies, append([]string(nil), f.states...)
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until the node's state annotation is want.
func waitState(t *testing.T, f *fakeNode, want string) {
	t.Helper()
	waitFor(t, "mig-state "+want, func() bool { return f.get(agentv1.AnnotMIGState) == want })
}

// startAgent runs RunAgent in a goroutine; the returned stop cancels it and
// checks that it returns nil promptly. It is also called at cleanup.
func startAgent(t *testing.T, lib nvml.Interface, f agentv1.NodeClient, opts AgentOptions) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if opts.Backoff == 0 {
		opts.Backoff = 5 * time.Millisecond
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	opts.Node = "n"
	go func() { done <- RunAgent(ctx, lib, f, opts) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("RunAgent returned %v after cancel, want nil", err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("RunAgent did not return within 5s of its context being cancelled")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// layoutAnnotation is the annotation gpuform apply writes:
// {"config": mig-parted entries, "gpu", "name"}.
func layoutAnnotation(t *testing.T, name, gpu string, l agentv1.Layout) string {
	t.Helper()
	s, err := agentv1.MIGLayout{Name: name, GPU: gpu, Config: l}.Annotation()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// publishedInventory decodes the inventory annotation, checking it is
// what gpuform's engine accepts.
func publishedInventory(t *testing.T, f *fakeNode) *agentv1.Inventory {
	t.Helper()
	s := f.get(agentv1.AnnotInventory)
	if _, err := agentv1.ParseInventory(s); err != nil {
		t.Fatalf("engine rejects the published inventory: %v\n%s", err, s)
	}
	var inv agentv1.Inventory
	if err := json.Unmarshal([]byte(s), &inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

// guardProcesses makes the simulated GPUs' process lists safe to change
// while the agent runs; the returned func sets GPU i's processes.
func guardProcesses(n *simNode) func(i int, pids ...uint32) {
	var mu sync.Mutex
	procs := map[int][]nvml.ProcessInfo{}
	for i := range n.srv.Devices {
		n.dev(i).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			mu.Lock()
			defer mu.Unlock()
			return append([]nvml.ProcessInfo(nil), procs[i]...), nvml.SUCCESS
		}
	}
	return func(i int, pids ...uint32) {
		mu.Lock()
		defer mu.Unlock()
		procs[i] = nil
		for _, p := range pids {
			procs[i] = append(procs[i], nvml.ProcessInfo{Pid: p, UsedGpuMemory: 1 << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF})
		}
	}
}

// The agent's annotation names are the ones gpuform apply writes and the
// documentation names (both now take them from api/agent/v1).
func TestAgentAnnotations(t *testing.T) {
	if agentv1.AnnotMIGLayout != "gpuform.dev/mig-layout" || agentv1.AnnotMIGState != "gpuform.dev/mig-state" || agentv1.AnnotInventory != "gpuform.dev/inventory" {
		t.Errorf("annotations differ from the documented ones: %s %s %s", agentv1.AnnotMIGLayout, agentv1.AnnotMIGState, agentv1.AnnotInventory)
	}
}

// At start the agent publishes the inventory, and no MIG state when the
// node asks for no layout; it republishes it when the GPUs change (running
// processes, read every Resync) and when someone removes it.
func TestAgentPublishesInventory(t *testing.T) {
	n := newSimNode(t, "A100-80GB")
	setProcs := guardProcesses(n)
	f := newFakeNode(map[string]string{"other": "kept"})
	startAgent(t, n.srv, f, AgentOptions{Resync: 20 * time.Millisecond})
	waitFor(t, "the inventory", func() bool { return f.get(agentv1.AnnotInventory) != "" })
	inv := publishedInventory(t, f)
	if len(inv.GPUs) != 8 || inv.GPUs[0].Model != "A100-80GB" || inv.DriverVersion == "" {
		t.Errorf("inventory = %+v", inv)
	}
	node := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n", "annotations": map[string]any{agentv1.AnnotInventory: f.get(agentv1.AnnotInventory)}}}
	if ni := capacity.InventoryOf(&unstructured.Unstructured{Object: node}, mig.Default()); ni.Source != "agent" || ni.Model != "A100-80GB" || ni.GPUs != 8 {
		t.Errorf("engine reads %+v", ni)
	}
	if f.get(agentv1.AnnotMIGState) != "" || f.get("other") != "kept" {
		t.Errorf("annotations: state %q other %q", f.get(agentv1.AnnotMIGState), f.get("other"))
	}

	setProcs(3, 4242)
	waitFor(t, "the process in the inventory", func() bool { return strings.Contains(f.get(agentv1.AnnotInventory), `"pid":4242`) })
	setProcs(3)
	waitFor(t, "the process gone from the inventory", func() bool { return !strings.Contains(f.get(agentv1.AnnotInventory), `"pid":4242`) })

	applies, _ := f.snapshot()
	time.Sleep(100 * time.Millisecond) // several resyncs with nothing new
	if again, _ := f.snapshot(); again != applies {
		t.Errorf("%d applies with nothing new to publish", again-applies)
	}

	f.set(agentv1.AnnotInventory, "")
	waitFor(t, "the inventory published again", func() bool { return f.get(agentv1.AnnotInventory) != "" })
}

// The layout gpuform asks for is applied once: pending, then success, the
// inventory shows the solver's placements, and seeing the same annotation
// again (node updates, an agent restart) changes nothing on the GPUs.
func TestAgentAppliesLayout(t *testing.T) {
	n := newSimNode(t, "A100-80GB")
	f := newFakeNode(nil)
	stop := startAgent(t, n.srv, f, AgentOptions{})
	waitFor(t, "the inventory", func() bool { return f.get(agentv1.AnnotInventory) != "" })

	halves := layoutAnnotation(t, "halves", "A100-80GB", allGPUs(map[string]int{"3g.40gb": 2}))
	f.set(agentv1.AnnotMIGLayout, halves, agentv1.AnnotMIGState, agentv1.StatePending) // as gpuform apply does
	waitState(t, f, agentv1.StateSuccess)
	if _, states := f.snapshot(); strings.Join(states, ",") != "pending,success" {
		t.Errorf("states = %q, want pending then success", states)
	}
	want := solved(t, n.gpu, map[string]int{"3g.40gb": 2})
	for _, g := range publishedInventory(t, f).GPUs {
		if got := instances(&g); strings.Join(got, " ") != strings.Join(want, " ") || !g.MIGEnabled {
			t.Errorf("GPU %d: instances %v, want %v (MIG on: %v)", g.Index, got, want, g.MIGEnabled)
		}
	}
	if want := (counts{createGI: 16, createCI: 16, setMode: 8}); n.calls != want {
		t.Errorf("NVML calls %+v, want %+v", n.calls, want)
	}

	// Node updates that keep the layout: nothing happens.
	calls := n.calls
	applies, _ := f.snapshot()
	for i := range 5 {
		f.set("kubelet-heartbeat", fmt.Sprint(i))
	}
	time.Sleep(200 * time.Millisecond)
	if again, _ := f.snapshot(); n.calls != calls || again != applies {
		t.Errorf("the same layout seen again: NVML calls %+v -> %+v, applies %d -> %d", calls, n.calls, applies, again)
	}

	// A new layout destroys what must go and creates the rest.
	sevens := layoutAnnotation(t, "sevens", "A100-80GB", allGPUs(map[string]int{"1g.10gb": 7}))
	f.set(agentv1.AnnotMIGLayout, sevens, agentv1.AnnotMIGState, agentv1.StatePending)
	waitFor(t, "the second layout", func() bool {
		_, states := f.snapshot()
		return strings.Join(states, ",") == "pending,success,pending,success"
	})
	for _, g := range publishedInventory(t, f).GPUs {
		if s := g.Slices(); len(s) != 1 || s["1g.10gb"] != 7 {
			t.Errorf("GPU %d: slices %v", g.Index, s)
		}
	}

	// An agent restarted (or a node rebooted with MIG instances kept)
	// applies the same layout again without changing the GPUs.
	stop()
	calls = n.calls
	startAgent(t, n.srv, f, AgentOptions{})
	waitFor(t, "the restarted agent's success", func() bool {
		_, states := f.snapshot()
		return len(states) == 6 && states[5] == agentv1.StateSuccess
	})
	if n.calls != calls {
		t.Errorf("restart changed the GPUs: NVML calls %+v -> %+v", calls, n.calls)
	}

	// No layout any more: the state goes, the GPUs stay as they are.
	f.set(agentv1.AnnotMIGLayout, "")
	waitState(t, f, "")
	if n.calls != calls || f.get(agentv1.AnnotInventory) == "" {
		t.Errorf("removing the layout: NVML calls %+v -> %+v, inventory %q", calls, n.calls, f.get(agentv1.AnnotInventory))
	}
}

// Busy GPUs are not changed: the state says which, and the layout is
// applied when they are idle again, or at once with AllowBusy.
func TestAgentBusyGPUs(t *testing.T) {
	layout := layoutAnnotation(t, "halves", "A100-80GB", allGPUs(map[string]int{"3g.40gb": 2}))

	n := newSimNode(t, "A100-80GB")
	setProcs := guardProcesses(n)
	setProcs(2, 4242, 4243)
	setProcs(5, 77)
	f := newFakeNode(map[string]string{agentv1.AnnotMIGLayout: layout})
	startAgent(t, n.srv, f, AgentOptions{Retry: 20 * time.Millisecond, MaxRetry: 40 * time.Millisecond})
	waitFor(t, "failed", func() bool { return strings.HasPrefix(f.get(agentv1.AnnotMIGState), "failed") })
	if got, want := f.get(agentv1.AnnotMIGState), "failed: GPUs busy: GPU 2 pids 4242,4243; GPU 5 pids 77"; got != want {
		t.Errorf("state = %q, want %q", got, want)
	}
	if n.calls.total() != 0 {
		t.Errorf("busy GPUs changed: %+v", n.calls)
	}
	applies, _ := f.snapshot()
	time.Sleep(150 * time.Millisecond) // retries that fail the same way
	if again, _ := f.snapshot(); again != applies || n.calls.total() != 0 {
		t.Errorf("retries of a busy layout: %d applies, calls %+v", again-applies, n.calls)
	}
	setProcs(2)
	setProcs(5)
	waitState(t, f, agentv1.StateSuccess)
	if _, states := f.snapshot(); len(states) != 3 || states[0] != agentv1.StatePending || !strings.HasPrefix(states[1], "failed: GPUs busy") || states[2] != agentv1.StateSuccess {
		t.Errorf("states = %q, want pending, failed: GPUs busy, success", states)
	}

	n = newSimNode(t, "A100-80GB")
	setProcs = guardProcesses(n)
	setProcs(2, 4242)
	f = newFakeNode(map[string]string{agentv1.AnnotMIGLayout: layout})
	startAgent(t, n.srv, f, AgentOptions{AllowBusy: true})
	waitState(t, f, agentv1.StateSuccess)
}

// A MIG mode change that needs a GPU reset is reported as reboot-required;
// the agent started after the reboot finishes the layout.
func TestAgentRebootRequired(t *testing.T) {
	n := newSimNode(t, "H100-80GB")
	for i := range n.srv.Devices {
		n.needsReset[i] = true
	}
	layout := layoutAnnotation(t, "sevens", "H100-80GB", allGPUs(map[string]int{"1g.10gb": 7}))
	f := newFakeNode(map[string]string{agentv1.AnnotMIGLayout: layout})
	stop := startAgent(t, n.srv, f, AgentOptions{})
	waitState(t, f, agentv1.StateRebootRequired)
	for _, g := range publishedInventory(t, f).GPUs {
		if g.MIGEnabled || !g.MIGPending {
			t.Errorf("GPU %d: MIG enabled %v pending %v, want a pending enable", g.Index, g.MIGEnabled, g.MIGPending)
		}
	}
	stop()
	n.reboot()
	startAgent(t, n.srv, f, AgentOptions{})
	waitState(t, f, agentv1.StateSuccess)
	if s := publishedInventory(t, f).GPUs[7].Slices(); s["1g.10gb"] != 7 {
		t.Errorf("GPU 7 slices after the reboot: %v", s)
	}
}

// Layouts that cannot apply fail with a one-line reason and change nothing;
// those that would fail the same way again are not retried.
func TestAgentRefusesLayouts(t *testing.T) {
	tests := []struct {
		name   string
		layout string
		want   string
		retry  bool
	}{
		{"not JSON", "{nope", "failed: invalid gpuform.dev/mig-layout annotation: invalid character 'n'", false},
		{"no entries", `{"name":"x","gpu":"A100-80GB","config":[]}`, "failed: invalid gpuform.dev/mig-layout annotation: no config entries", false},
		{"device filter", `{"name":"x","config":[{"devices":"all","device-filter":"0x20B010DE","mig-enabled":true}]}`, `failed: invalid gpuform.dev/mig-layout annotation: layout entry has a "device-filter"`, false},
		{"other GPU model", layoutAnnotation(t, "h", "H100-80GB", allGPUs(map[string]int{"1g.10gb": 7})), "failed: layout h is for H100-80GB but GPU 0 is NVIDIA A100-SXM4-80GB", false},
		{"unknown GPU model", layoutAnnotation(t, "z", "Z9000", allGPUs(map[string]int{"1g.10gb": 7})), `failed: layout z is for GPU model "Z9000", which this agent's catalog does not know`, false},
		{"GPU index out of range", layoutAnnotation(t, "i", "A100-80GB", agentv1.Layout{{Indexes: []int{9}, Enabled: true, Slices: map[string]int{"1g.10gb": 7}}}), "failed: layout entry 0 names GPU 9, but this machine has 8 GPUs", false},
		{"impossible slices", layoutAnnotation(t, "big", "A100-80GB", allGPUs(map[string]int{"7g.80gb": 2})), "failed: GPU 0: ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newSimNode(t, "A100-80GB")
			var reads atomic.Int32 // every check and Apply counts the GPUs first
			count := n.srv.DeviceGetCountFunc
			n.srv.DeviceGetCountFunc = func() (int, nvml.Return) {
				reads.Add(1)
				return count()
			}
			f := newFakeNode(map[string]string{agentv1.AnnotMIGLayout: tt.layout})
			startAgent(t, n.srv, f, AgentOptions{Retry: 10 * time.Millisecond, MaxRetry: 10 * time.Millisecond})
			waitFor(t, "failed", func() bool { return strings.HasPrefix(f.get(agentv1.AnnotMIGState), "failed") })
			got := f.get(agentv1.AnnotMIGState)
			if !strings.HasPrefix(got, tt.want) || len(got) > 200 || strings.ContainsAny(got, "\n\r") {
				t.Errorf("state = %q, want one line of at most 200 bytes starting %q", got, tt.want)
			}
			before := reads.Load()
			time.Sleep(100 * time.Millisecond)
			if n.calls.total() != 0 {
				t.Errorf("NVML calls %+v", n.calls)
			}
			if retried := reads.Load() > before; retried != tt.retry {
				t.Errorf("retried = %v, want %v", retried, tt.retry)
			}
		})
	}
}

// API errors: failed reads are retried with backoff, a broken watch is
// resumed from a fresh read, and a node deleted and registered again gets
// its annotations back.
func TestAgentReconnects(t *testing.T) {
	n := newSimNode(t, "A100-80GB")
	f := newFakeNode(nil)
	f.failGets = 3
	startAgent(t, n.srv, f, AgentOptions{Backoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	waitFor(t, "the inventory after failed reads", func() bool { return f.get(agentv1.AnnotInventory) != "" })

	f.mu.Lock()
	gets := f.gets
	f.mu.Unlock()
	f.breakWatches(errors.New("too old resource version: 1 (42)"))
	waitFor(t, "a new watch", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.gets > gets && f.watches >= 2
	})
	f.set(agentv1.AnnotMIGLayout, layoutAnnotation(t, "halves", "A100-80GB", allGPUs(map[string]int{"3g.40gb": 2})))
	waitState(t, f, agentv1.StateSuccess)

	f.setDeleted(true)
	f.setDeleted(false)
	waitFor(t, "the inventory on the node registered again", func() bool { return f.get(agentv1.AnnotInventory) != "" })
}

// Cancelled in the middle of an apply, the agent finishes it, publishes
// how it ended and returns.
func TestAgentStopsDuringApply(t *testing.T) {
	n := newSimNode(t, "A100-80GB")
	started, release := make(chan struct{}), make(chan struct{})
	dev := n.dev(0)
	create := dev.CreateGpuInstanceWithPlacementFunc
	var once sync.Once
	dev.CreateGpuInstanceWithPlacementFunc = func(info *nvml.GpuInstanceProfileInfo, pl *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
		once.Do(func() {
			close(started)
			<-release
		})
		return create(info, pl)
	}
	f := newFakeNode(map[string]string{agentv1.AnnotMIGLayout: layoutAnnotation(t, "halves", "A100-80GB", allGPUs(map[string]int{"3g.40gb": 2}))})
	stop := startAgent(t, n.srv, f, AgentOptions{})
	<-started
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(release)
	}()
	stop() // cancels, waits for RunAgent to return nil
	if got := f.get(agentv1.AnnotMIGState); got != agentv1.StateSuccess {
		t.Errorf("state after stopping during the apply = %q, want success", got)
	}
}

// Without NVML the agent returns the UnavailableError at once and never
// touches the node.
func TestAgentNVMLUnavailable(t *testing.T) {
	lib, called := strictLib(t, nvml.ERROR_LIBRARY_NOT_FOUND, false)
	f := newFakeNode(nil)
	err := RunAgent(context.Background(), lib, f, AgentOptions{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("RunAgent = %v, want ErrUnavailable", err)
	}
	if len(*called) != 1 || f.gets != 0 || f.applies != 0 {
		t.Errorf("NVML calls %v, node gets %d applies %d", *called, f.gets, f.applies)
	}
}

func TestFailedState(t *testing.T) {
	long := "first line\n\tsecond  line " + strings.Repeat("é", 200)
	got := failedState(long)
	if len(got) > 200 || !strings.HasPrefix(got, "failed: first line; second line é") || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("failedState = %q (%d bytes)", got, len(got))
	}
	if got := failedState("short"); got != "failed: short" {
		t.Errorf("failedState(short) = %q", got)
	}
}

// An inventory too large for the annotation keeps 4 processes per GPU and
// says so; engine still accepts it.
func TestInventoryJSONTrimsProcesses(t *testing.T) {
	inv := &agentv1.Inventory{Version: agentv1.InventoryVersion, DriverVersion: "550.54.15"}
	for i := range 8 {
		g := agentv1.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Name: "NVIDIA H100 80GB HBM3", Model: "H100-80GB", MemoryMiB: 81559}
		for p := range 1000 {
			g.Processes = append(g.Processes, agentv1.Process{PID: 100000 + p, UsedMemoryMiB: 512})
		}
		inv.GPUs = append(inv.GPUs, g)
	}
	s, err := inventoryJSON(inv)
	if err != nil {
		t.Fatal(err)
	}
	var got agentv1.Inventory
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatal(err)
	}
	if _, err := agentv1.ParseInventory(s); err != nil || len(s) > maxInventoryLen || len(got.GPUs[7].Processes) != 4 || len(got.Warnings) != 1 || len(inv.GPUs[0].Processes) != 1000 {
		t.Errorf("%d bytes, err %v, GPU 7 has %d processes, warnings %q; original cut to %d", len(s), err, len(got.GPUs[7].Processes), got.Warnings, len(inv.GPUs[0].Processes))
	}
}
