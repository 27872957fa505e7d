package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
)

// Refresh reads the live state of the stack: one LIST per kind
// with the gpuform.dev/stack selector, one LIST of Nodes, one of the GPU
// Operator's ClusterPolicies, one of the RuntimeClasses, one of the pods
// not yet ended (paged, what engine.PodWarnings reads of those in the
// tenants' namespaces), one of the ConfigMaps of the stack's record in
// gpuform-system, and, only for
// kinds where a desired object was not found, one metadata-only LIST to
// find foreign objects in the way. It never GETs single objects. Objects
// of the stack keep no status and only gpuform's managedFields entries
// (see decodeList): the diff reads nothing else of them. Once every LIST
// is decoded, each is settled against d (engine.Settler, settleAll): one
// the stack owns and d has unchanged is kept as a slim copy, in
// live.Settled. LISTs that Prefetch started for the same stack and kinds
// are used, not sent again.
func (c *Client) Refresh(ctx context.Context, d *engine.Desired, opts engine.RefreshOptions) (*engine.Live, error) {
	par := opts.Parallelism
	if par == 0 {
		par = listParallelism
	}
	c.prefetchMu.Lock()
	sl := c.prefetched
	c.prefetched = nil
	c.prefetchMu.Unlock()
	settler := engine.NewSettler(d)
	if c.keepWhole {
		settler = nil
	}
	if sl == nil || sl.stack != d.Stack || !slices.Equal(sl.kinds, d.Kinds) {
		if sl != nil {
			sl.cancel() // another stack's: its answers would be thrown away
		}
		sl = c.startLists(ctx, d.Stack, d.Kinds, largestFirst(d), par)
	}
	defer sl.cancel()
	var read inventoryRead
	select {
	case read = <-sl.inventory:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if read.err != nil {
		return nil, read.err
	}
	type podsRead struct {
		pods      []engine.LivePod
		truncated bool
		err       error
	}
	podsCh := make(chan podsRead, 1)
	go func() {
		var r podsRead
		r.pods, r.truncated, r.err = c.tenantPods(ctx, tenantNamespaces(d))
		podsCh <- r
	}()
	select {
	case <-sl.done:
	case <-ctx.Done():
		// The LISTs stop with ctx too (a prefetch's share the command's
		// context) and say which request did not finish: wait briefly for
		// that rather than report a bare deadline.
		select {
		case <-sl.done:
		case <-time.After(listsGrace):
			return nil, ctx.Err()
		}
	}
	if sl.err != nil {
		return nil, sl.err
	}
	live := sl.live
	live.Inventory = read.inv
	if settler != nil {
		settler.UseInventory(read.inv)
		settleAll(live, settler)
	}
	if len(live.Settled) > 0 {
		live.SettledFor = d
	}
	live.Foreign = map[engine.Key]*unstructured.Unstructured{}
	live.Source = fmt.Sprintf("%s (context %s)", c.Server, c.Context)
	if err := c.findForeign(ctx, d, live, sl.mappings, opts, par); err != nil {
		return nil, err
	}
	pods := <-podsCh
	if pods.err != nil {
		return nil, pods.err
	}
	live.Pods, live.PodsTruncated = pods.pods, pods.truncated
	return live, nil
}

// listParallelism is how many LISTs a refresh sends at once by default:
// more than the kinds, so all of them go out together.
const listParallelism = 16

// listsGrace is how long Refresh, once its context ends, waits for the
// LISTs in flight to report which of them it cut short.
const listsGrace = 200 * time.Millisecond

// Prefetch starts the LISTs of stack's objects (every managed kind), of
// the Nodes and of the ClusterPolicies, so that the API server serves them
// while the configuration compiles; the next Refresh of the same stack
// waits for them instead of sending them. Call it only once the
// configuration is valid: a bad configuration makes no cluster call. The
// items are decoded as they arrive and settled by that Refresh: a prefetch
// no Refresh takes holds them until ctx ends or the next Prefetch.
func (c *Client) Prefetch(ctx context.Context, stack string) {
	kinds := engine.ManagedKinds()
	// Without the desired objects, the apply order reversed puts the
	// InferenceServices, the largest kind, first.
	order := slices.Clone(kinds)
	slices.Reverse(order)
	sl := c.startLists(ctx, stack, kinds, order, listParallelism)
	c.prefetchMu.Lock()
	old := c.prefetched
	c.prefetched = sl
	c.prefetchMu.Unlock()
	if old != nil {
		old.cancel() // never refreshed: its items would wait for the desired objects until ctx ends
	}
}

// stackLists are the LISTs of a stack's kinds, its Nodes and its
// ClusterPolicies, in flight until done is closed.
type stackLists struct {
	stack    string
	kinds    []engine.Kind
	cancel   context.CancelFunc
	done     chan struct{}
	live     *engine.Live
	mappings map[schema.GroupKind]*meta.RESTMapping
	err      error
	// inventory receives the stack's record once read.
	inventory chan inventoryRead
}

// inventoryRead is the stack's record as read, or why it could not be.
type inventoryRead struct {
	inv *engine.Inventory
	err error
}

// startLists sends the LISTs of stack's kinds (in the order of send, a
// permutation of kinds, at most par at once), of the Nodes and of the
// ClusterPolicies, each decoded as it arrives.
func (c *Client) startLists(ctx context.Context, stack string, kinds, send []engine.Kind, par int) *stackLists {
	ctx, cancel := context.WithCancel(ctx)
	sl := &stackLists{
		cancel:   cancel,
		stack:    stack,
		kinds:    kinds,
		done:     make(chan struct{}),
		live:     &engine.Live{Objects: map[engine.Key]*unstructured.Unstructured{}, Settled: map[engine.Key]bool{}},
		mappings: map[schema.GroupKind]*meta.RESTMapping{},
	}
	// The stack's record of what it applied (engine.Inventory): one LIST
	// in gpuform's own namespace, which Refresh waits for before it
	// settles the items (the Settler settles only what the record holds).
	sl.inventory = make(chan inventoryRead, 1)
	go func() {
		inv, err := c.readInventory(ctx, stack)
		sl.inventory <- inventoryRead{inv, err}
	}()
	live := sl.live
	selector := engine.LabelStack + "=" + stack
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for _, k := range send {
		g.Go(func() error {
			m, err := c.mapping(k)
			if err != nil {
				if meta.IsNoMatchError(err) {
					others := c.servedVersions(k)
					mu.Lock()
					live.MissingKinds = append(live.MissingKinds, k)
					if len(others) > 0 {
						if live.ServedVersions == nil {
							live.ServedVersions = map[schema.GroupKind][]string{}
						}
						live.ServedVersions[k.GroupKind()] = others
					}
					mu.Unlock()
					return nil
				}
				return c.explain("discover "+k.Kind, err)
			}
			items, err := c.listAllPages(gctx, m, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				return c.explain("list "+k.Kind+"s", err)
			}
			mu.Lock()
			defer mu.Unlock()
			sl.mappings[k.GroupKind()] = m
			for _, u := range items {
				live.Objects[engine.KeyOf(u)] = u
			}
			return nil
		})
	}
	// The kinds listed whole, not by stack (the Nodes, the ClusterPolicies,
	// the RuntimeClasses): the registry's, each kept by its reader.
	for _, rk := range engine.ReadKinds() {
		g.Go(func() error {
			return c.listAll(gctx, rk.Kind, plural(rk.Kind.Kind), rk.Absent, rk.FieldSelector, func(items []*unstructured.Unstructured) {
				mu.Lock()
				defer mu.Unlock()
				rk.Keep(live, items)
			})
		})
	}
	go func() {
		sl.err = g.Wait()
		close(sl.done)
	}()
	return sl
}

// listAll lists every object of kind k (what names them in errors) that
// fieldSelector selects (empty: all) and hands them to keep; a kind the
// cluster does not serve is no error when optional (keep is not called).
func (c *Client) listAll(ctx context.Context, k engine.Kind, what string, optional bool, fieldSelector string, keep func([]*unstructured.Unstructured)) error {
	m, err := c.mapping(k)
	if optional && meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return c.explain("discover "+what, err)
	}
	items, err := c.list(ctx, m, metav1.ListOptions{FieldSelector: fieldSelector})
	if err != nil {
		return c.explain("list "+what, err)
	}
	keep(items)
	return nil
}

// plural is the plural of a kind's name as messages write it: Nodes,
// ClusterPolicies, RuntimeClasses.
func plural(kind string) string {
	switch {
	case strings.HasSuffix(kind, "y"):
		return strings.TrimSuffix(kind, "y") + "ies"
	case strings.HasSuffix(kind, "s"):
		return kind + "es"
	}
	return kind + "s"
}

// largestFirst orders d's kinds by how many objects of each d wants, most
// first: the LIST of the largest kind (the InferenceServices) takes the API
// server longest, so it goes out first rather than behind the small ones.
func largestFirst(d *engine.Desired) []engine.Kind {
	n := map[schema.GroupKind]int{}
	for _, o := range d.Objects {
		n[o.Object.GroupVersionKind().GroupKind()]++
	}
	kinds := slices.Clone(d.Kinds)
	slices.SortStableFunc(kinds, func(a, b engine.Kind) int { return n[b.GroupKind()] - n[a.GroupKind()] })
	return kinds
}

// findForeign looks for desired objects that exist without the stack label.
func (c *Client) findForeign(ctx context.Context, d *engine.Desired, live *engine.Live, mappings map[schema.GroupKind]*meta.RESTMapping, opts engine.RefreshOptions, par int) error {
	wanted := map[schema.GroupKind]map[engine.Key]bool{}
	for _, o := range d.Objects {
		k := o.Key()
		if _, ok := live.Objects[k]; ok {
			continue
		}
		gk := o.Object.GroupVersionKind().GroupKind()
		if mappings[gk] == nil {
			continue
		}
		if wanted[gk] == nil {
			wanted[gk] = map[engine.Key]bool{}
		}
		wanted[gk][k] = true
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for gk, keys := range wanted {
		m := mappings[gk]
		g.Go(func() error {
			var found []*unstructured.Unstructured
			var err error
			if opts.Adopt || recorded(live.Inventory, keys) {
				// Whole objects: an adoption, or an import (gpuform import),
				// diffs them.
				found, err = c.list(gctx, m, metav1.ListOptions{})
			} else {
				found, err = c.listMetadata(gctx, m)
			}
			if err != nil {
				return c.explain("list "+gk.Kind+"s", err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, u := range found {
				k := engine.KeyOf(u)
				if keys[k] {
					live.Foreign[k] = u
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// recorded reports whether inv holds any of keys: objects imported into
// the stack's record before it wrote them.
func recorded(inv *engine.Inventory, keys map[engine.Key]bool) bool {
	if inv == nil {
		return false
	}
	for k := range keys {
		if _, ok := inv.Objects[k]; ok {
			return true
		}
	}
	return false
}

// servedVersions are the versions discovery serves kind k at, other than
// k's own: what an older release of its CRD (or of Kubernetes) serves.
func (c *Client) servedVersions(k engine.Kind) []string {
	ms, err := c.mapper.RESTMappings(k.GroupKind())
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range ms {
		if v := m.GroupVersionKind.Version; v != k.Version && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// mapping resolves a kind to its REST resource through discovery.
func (c *Client) mapping(k engine.Kind) (*meta.RESTMapping, error) {
	return c.mapper.RESTMapping(k.GroupKind(), k.Version)
}

// list reads every object of a resource matching opts: one LIST request,
// streamed and decoded with decodeListStream as it arrives (with a page
// size set, one request per page). A response cut off mid-stream is read
// again, as the transport retries reads that fail before the response.
func (c *Client) list(ctx context.Context, m *meta.RESTMapping, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	return c.listAllPages(ctx, m, opts)
}

// listAllPages is list with the label and field selectors of opts (""
// for none).
func (c *Client) listAllPages(ctx context.Context, m *meta.RESTMapping, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	cont := ""
	for {
		items, next, err := c.listPage(ctx, m, opts, cont)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		cont = next
	}
}

// listPage reads one LIST response, reading it again when the connection
// breaks while the body arrives (the transport retries only failures
// before the response).
func (c *Client) listPage(ctx context.Context, m *meta.RESTMapping, opts metav1.ListOptions, cont string) (items []*unstructured.Unstructured, next string, err error) {
	err = retryWhile(ctx, readAttempts, readRetryMax, isBrokenBody, func() error {
		var err error
		items, next, err = c.streamPage(ctx, m, opts, cont)
		return err
	})
	return items, next, err
}

// streamPage sends one LIST request and decodes its response as it streams.
func (c *Client) streamPage(ctx context.Context, m *meta.RESTMapping, opts metav1.ListOptions, cont string) ([]*unstructured.Unstructured, string, error) {
	req := c.typed.CoreV1().RESTClient().Get().AbsPath(resourcePath(m.Resource)...).
		SetHeader("Accept", "application/json")
	if c.pageSize > 0 {
		req = req.Param("limit", strconv.FormatInt(c.pageSize, 10))
	}
	if opts.LabelSelector != "" {
		req = req.Param("labelSelector", opts.LabelSelector)
	}
	if opts.FieldSelector != "" {
		req = req.Param("fieldSelector", opts.FieldSelector)
	}
	if cont != "" {
		req = req.Param("continue", cont)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	r := &bodyReader{r: body}
	items, next, err := decodeListStream(r, m.GroupVersionKind, opts.LabelSelector != "")
	if rerr := r.err; rerr != nil && rerr != io.EOF {
		if transientResponse(nil, rerr) {
			return nil, "", &brokenBody{rerr}
		}
		return nil, "", rerr
	}
	return items, next, err
}

// bodyReader remembers the error reading a response body ended with, so a
// broken connection is told apart from a malformed list.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

// brokenBody is a LIST response whose connection broke mid-body.
type brokenBody struct{ err error }

// isBrokenBody reports whether err is a brokenBody.
func isBrokenBody(err error) bool {
	var b *brokenBody
	return errors.As(err, &b)
}

func (b *brokenBody) Error() string { return "read list response: " + b.err.Error() }
func (b *brokenBody) Unwrap() error { return b.err }

// resourcePath is the URL path of a resource across all namespaces.
func resourcePath(r schema.GroupVersionResource) []string {
	if r.Group == "" {
		return []string{"/api", r.Version, r.Resource}
	}
	return []string{"/apis", r.Group, r.Version, r.Resource}
}

// listMetadata pages through the metadata of every object of a resource.
func (c *Client) listMetadata(ctx context.Context, m *meta.RESTMapping) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{Limit: max(c.pageSize, 0)}
	for {
		l, err := c.metadata.Resource(m.Resource).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			pm := &l.Items[i]
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetGroupVersionKind(m.GroupVersionKind)
			u.SetName(pm.Name)
			u.SetNamespace(pm.Namespace)
			u.SetLabels(pm.Labels)
			u.SetAnnotations(pm.Annotations)
			u.SetResourceVersion(pm.ResourceVersion)
			u.SetManagedFields(pm.ManagedFields)
			out = append(out, u)
		}
		if l.Continue == "" {
			return out, nil
		}
		opts.Continue = l.Continue
	}
}
