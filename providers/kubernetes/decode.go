package kubernetes

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/kinds"
)

// decodeList decodes a JSON list response into its items, each with
// apiVersion and kind set to gvk (list items carry neither), and returns
// the list's continue token.
//
// It builds the same values as client-go's unstructured JSON decoding
// (map[string]any, []any, string, int64 for integers, float64, bool, nil)
// several times faster and with a fraction of the garbage: refresh decodes
// every object of the stack, and with encoding/json that was the largest
// cost of a plan. The items are cut out of the response (listCutter) and
// scanned in place (scanner).
//
// With trim, each item keeps only what the diff reads of a stack's own
// objects (see ownObject): no status, and only field manager gpuform's
// managedFields entries, their fieldsV1 an unparsed JSON string; Nodes, listed whole,
// keep what gpuform reads of them either way (see nodeObject). Repeated
// strings (field names, manager names, versions) share one copy across
// the list, since these objects stay in memory for the whole plan.
func decodeList(data []byte, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
	return decodeListFrom(newBytesCutter(data), gvk, trim)
}

// decodeListStream is decodeList reading from r as the response arrives:
// the items are decoded while the API server is still sending the rest,
// and the raw list is never held whole.
func decodeListStream(r io.Reader, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
	return decodeListFrom(newListCutter(r), gvk, trim)
}

// itemBatch is how many items of a list one worker decodes at a time.
const itemBatch = 128

// maxDecodeWorkers bounds the goroutines that decode one list's items.
const maxDecodeWorkers = 4

// decodeListFrom is decodeList over c. The items' bytes are cut out of
// the stream here and decoded into objects by up to maxDecodeWorkers
// goroutines, itemBatch at a time, so a long list (a large stack's
// InferenceServices) is decoded on every core while it arrives;
// the items keep their order. Decoding copies what it keeps of the items'
// bytes, so the response's buffers go once decoded.
func decodeListFrom(c *listCutter, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, string, error) {
	d := newDecoder(false)
	cont := ""
	p := newItemPool(gvk, trim)
	var batch itemJob
	err := c.list(func(raw []byte) {
		batch.raws = append(batch.raws, raw)
		if len(batch.raws) == itemBatch {
			p.add(batch)
			batch = itemJob{}
		}
	}, func(raw []byte) error {
		sc := scanner{b: raw}
		meta := sc.value(d)
		sc.end()
		if m, ok := meta.(map[string]any); ok {
			cont, _ = m["continue"].(string)
		}
		return sc.err
	})
	if len(batch.raws) > 0 {
		p.add(batch)
	}
	items, perr := p.wait()
	if err != nil {
		// A list cut short ends in io.ErrUnexpectedEOF: an error like any other.
		return nil, "", fmt.Errorf("decode %s list: %w", gvk.Kind, err)
	}
	if perr != nil {
		return nil, "", fmt.Errorf("decode %s list: %w", gvk.Kind, perr)
	}
	return items, cont, nil
}

// itemPool decodes batches of raw list items on worker goroutines, started
// as batches arrive, each with its own string interning.
type itemPool struct {
	gvk     schema.GroupVersionKind
	trim    bool
	jobs    chan itemJob
	wg      sync.WaitGroup
	workers int
	n       int

	mu      sync.Mutex
	results [][]*unstructured.Unstructured
	err     error
}

// itemJob is a batch of items to decode, index-th in the list.
type itemJob struct {
	index int
	raws  [][]byte
}

func newItemPool(gvk schema.GroupVersionKind, trim bool) *itemPool {
	return &itemPool{gvk: gvk, trim: trim, jobs: make(chan itemJob, maxDecodeWorkers)}
}

// add queues one batch, starting another worker while there are fewer
// than the processors allow.
func (p *itemPool) add(job itemJob) {
	if p.workers < min(runtime.GOMAXPROCS(0), maxDecodeWorkers) {
		p.workers++
		p.wg.Go(p.work)
	}
	p.mu.Lock()
	p.results = append(p.results, nil)
	p.mu.Unlock()
	job.index = p.n
	p.jobs <- job
	p.n++
}

func (p *itemPool) work() {
	d := newDecoder(p.trim)
	for job := range p.jobs {
		out, err := d.batch(job.raws, p.gvk, p.trim)
		p.mu.Lock()
		p.results[job.index] = out
		if err != nil && p.err == nil {
			p.err = err
		}
		p.mu.Unlock()
	}
}

// wait returns every item decoded, in list order, or the first error.
func (p *itemPool) wait() ([]*unstructured.Unstructured, error) {
	close(p.jobs)
	p.wg.Wait()
	if p.err != nil {
		return nil, p.err
	}
	n := 0
	for _, r := range p.results {
		n += len(r)
	}
	items := make([]*unstructured.Unstructured, 0, n)
	for _, r := range p.results {
		items = append(items, r...)
	}
	return items, nil
}

// newDecoder returns a decoder of one worker; with trim it shares leaves.
func newDecoder(trim bool) *decoder {
	d := &decoder{strings: map[string]any{}, keys: map[string]string{}}
	if trim {
		d.leaves = map[string]map[string]any{}
	}
	return d
}

// batch decodes a batch of items.
func (d *decoder) batch(raws [][]byte, gvk schema.GroupVersionKind, trim bool) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(raws))
	d.others = kinds.Builtin().OwnedWhole(gvk.GroupKind())
	for _, raw := range raws {
		it, err := d.item(raw, gvk, trim)
		if err != nil {
			return out, err
		}
		out = append(out, it)
	}
	return out, nil
}

// item decodes one list item from its raw bytes.
func (d *decoder) item(raw []byte, gvk schema.GroupVersionKind, trim bool) (*unstructured.Unstructured, error) {
	s := scanner{b: raw}
	var obj map[string]any
	var ok bool
	switch {
	case trim:
		obj, ok = s.ownObject(d)
	case gvk.Group == "" && gvk.Kind == engine.KindNode.Kind:
		obj, ok = s.nodeObject(d)
	default:
		obj, ok = s.value(d).(map[string]any)
	}
	s.end()
	if s.err != nil {
		return nil, s.err
	}
	if !ok {
		return nil, fmt.Errorf("an item is not an object")
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetKind() == "" {
		u.SetGroupVersionKind(gvk)
	}
	return u, nil
}

// decoder reads JSON values as unstructured content, interning strings
// and, with leaves set, sharing small maps of scalars (see shareLeaf).
type decoder struct {
	// strings holds the one copy of each short string, boxed, so that a
	// string value costs no allocation either.
	strings map[string]any
	// keys holds the one copy of each field name: few, and looked up
	// for every field, so apart from the many strings.
	keys   map[string]string
	leaves map[string]map[string]any
	// others keeps other managers' managedFields entries (keptEntry):
	// set for the items of a kind owned whole.
	others bool
	// leafKey is shareLeaf's reused buffer.
	leafKey []byte
	// fieldSets holds the one copy of each fieldsV1 JSON (fieldSet).
	fieldSets map[string]string
}

// fieldSet returns the managed-fields set b (its JSON) as a string, one
// copy per content: the objects of a kind that gpuform applied alike
// have the same set, and a string is never written.
func (d *decoder) fieldSet(b []byte) string {
	if c, ok := d.fieldSets[string(b)]; ok {
		return c
	}
	if d.fieldSets == nil {
		d.fieldSets = map[string]string{}
	}
	c := string(b)
	d.fieldSets[c] = c
	return c
}

// shareLeaf returns the one copy this decoder keeps of a small map whose
// values are all scalars (a Pod's resources, a node selector, a label
// set), when it shares leaves (a stack's own objects, which are only read
// once refreshed): the same few such maps recur in thousands of objects,
// and each map costs some 300 bytes however few its entries.
func (d *decoder) shareLeaf(m map[string]any) map[string]any {
	if d.leaves == nil {
		return m
	}
	var ok bool
	if d.leafKey, ok = engine.AppendLeafKey(d.leafKey[:0], m); !ok {
		return m
	}
	if c, ok := d.leaves[string(d.leafKey)]; ok {
		return c
	}
	d.leaves[string(d.leafKey)] = m
	return m
}

// internKey is the interned field name of b's content, allocating only
// for a name not seen before.
func (d *decoder) internKey(b []byte) string {
	if c, ok := d.keys[string(b)]; ok {
		return c
	}
	if len(b) > 64 {
		return string(b)
	}
	k := d.intern(string(b))
	d.keys[k] = k
	return k
}

// internValue is the interned string of b's content as an interface
// value, boxed once, allocating only for a string not seen before.
func (d *decoder) internValue(b []byte) any {
	if len(b) > 64 {
		return string(b)
	}
	if c, ok := d.strings[string(b)]; ok {
		return c
	}
	var v any = string(b)
	d.strings[v.(string)] = v
	return v
}

// intern returns the one copy of s this decoder keeps.
func (d *decoder) intern(s string) string {
	if len(s) > 64 {
		return s
	}
	if c, ok := d.strings[s]; ok {
		return c.(string)
	}
	d.strings[s] = s
	return s
}

// unreadMetadata are the metadata fields of a stack's own objects that
// nothing reads after a refresh (outputs leave them out, engine.CleanLive):
// each a string or number of its own in every object of the stack. The uid
// is read: the stack's record (engine.Inventory) owns objects by it.
func unreadMetadata(key string) bool {
	switch key {
	case "creationTimestamp", "generation":
		return true
	}
	return false
}
