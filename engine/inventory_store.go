package engine

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LabelInventory marks the ConfigMaps of a stack's record (Inventory) in
// LockNamespace; its value is the stack. The record never carries
// LabelStack: it is no object of the stack, and is never pruned.
const LabelInventory = "gpuform.dev/inventory"

// inventoryKey is the ConfigMap binaryData key of a shard's gzipped JSON.
const inventoryKey = "inventory.json.gz"

// maxInventoryShard bounds a shard's compressed record, well under the
// API server's limit on the size of an object.
const maxInventoryShard = 768 << 10

// inventoryPerShard is how many objects a shard holds at first: a shard
// that compresses to more than maxInventoryShard is split in two.
const inventoryPerShard = 8192

// maxInventoryBytes bounds what a shard may decompress to.
const maxInventoryBytes = 64 << 20

// inventoryShard is one ConfigMap's part of a record.
type inventoryShard struct {
	Stack  string `json:"stack"`
	Seq    int64  `json:"seq"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	Commit string `json:"commit,omitempty"`
	// Commits are the commits the objects name by index.
	Commits []string `json:"commits"`
	// Objects are [group, kind, namespace, name, uid, commit index, address].
	Objects [][7]string `json:"objects"`
}

// InventoryName is the name of shard i of version seq of stack's record.
func InventoryName(stack string, seq int64, i int) string {
	return fmt.Sprintf("gpuform-inventory-%s-%d-%d", stack, seq, i)
}

// InventoryConfigMaps encodes inv as the ConfigMaps of its version
// inv.Seq+1 in LockNamespace: each a shard of the objects, in key order,
// as gzipped JSON under the API server's object size limit. A reader takes the newest
// version whose shards are all present (ReadInventory), so writing them
// all and then deleting the older versions never leaves a torn record.
func InventoryConfigMaps(inv *Inventory) ([]*unstructured.Unstructured, error) {
	keys := make([]Key, 0, len(inv.Objects))
	for k := range inv.Objects {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if a.Less(b) {
			return -1
		}
		if b.Less(a) {
			return 1
		}
		return 0
	})
	var parts [][]Key
	for lo := 0; lo < len(keys) || lo == 0; lo += inventoryPerShard {
		parts = append(parts, keys[lo:min(lo+inventoryPerShard, len(keys))])
		if len(keys) == 0 {
			break
		}
	}
	seq := inv.Seq + 1
	var blobs [][]byte
	for len(parts) > 0 {
		part := parts[0]
		blob, err := encodeShard(inv, part)
		if err != nil {
			return nil, err
		}
		if len(blob) > maxInventoryShard && len(part) > 1 {
			parts = append([][]Key{part[:len(part)/2], part[len(part)/2:]}, parts[1:]...)
			continue
		}
		blobs = append(blobs, blob)
		parts = parts[1:]
	}
	out := make([]*unstructured.Unstructured, len(blobs))
	for i := range blobs {
		// The shard numbers and count are in each blob: re-encoded here.
		blob, err := sealShard(blobs[i], inv, seq, i, len(blobs))
		if err != nil {
			return nil, err
		}
		out[i] = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{
				"name": InventoryName(inv.Stack, seq, i), "namespace": LockNamespace,
				"labels": map[string]any{LabelInventory: inv.Stack, LabelManagedBy: "gpuform"},
			},
			"binaryData": map[string]any{inventoryKey: base64.StdEncoding.EncodeToString(blob)},
		}}
	}
	return out, nil
}

// encodeShard gzips the JSON of inv's objects at keys (shard numbers not
// yet known: see sealShard).
func encodeShard(inv *Inventory, keys []Key) ([]byte, error) {
	s := inventoryShard{Stack: inv.Stack, Commit: inv.Commit, Objects: make([][7]string, len(keys))}
	index := map[string]int{}
	for i, k := range keys {
		e := inv.Objects[k]
		ci, ok := index[e.Commit]
		if !ok {
			ci = len(s.Commits)
			index[e.Commit] = ci
			s.Commits = append(s.Commits, e.Commit)
		}
		s.Objects[i] = [7]string{k.Group, k.Kind, k.Namespace, k.Name, e.UID, strconv.Itoa(ci), e.Address}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode the inventory of stack %s: %w", inv.Stack, err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compress the inventory of stack %s: %w", inv.Stack, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress the inventory of stack %s: %w", inv.Stack, err)
	}
	return buf.Bytes(), nil
}

// sealShard rewrites a shard encoded by encodeShard with its version,
// number and the count of shards.
func sealShard(blob []byte, inv *Inventory, seq int64, i, n int) ([]byte, error) {
	s, err := decodeShard(blob)
	if err != nil {
		return nil, err
	}
	s.Seq, s.Shard, s.Shards = seq, i, n
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode the inventory of stack %s: %w", inv.Stack, err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(raw) // a bytes.Buffer does not fail
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress the inventory of stack %s: %w", inv.Stack, err)
	}
	return buf.Bytes(), nil
}

// decodeShard reads a shard's gzipped JSON, at most maxInventoryBytes of it.
func decodeShard(blob []byte) (*inventoryShard, error) {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxInventoryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxInventoryBytes {
		return nil, fmt.Errorf("over %d bytes", maxInventoryBytes)
	}
	var s inventoryShard
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ReadInventory reads stack's record from the ConfigMaps of LockNamespace
// labelled with it (LabelInventory): the newest version whose shards are
// all there. It returns nil when there is none (a stack never applied, or
// last applied by a gpuform that kept no record). A shard that does not
// decode is an error: the record is not guessed at.
func ReadInventory(stack string, cms []*unstructured.Unstructured) (*Inventory, error) {
	type version struct {
		shards map[int]*inventoryShard
		n      int
	}
	versions := map[int64]*version{}
	for _, cm := range cms {
		if cm.GetNamespace() != LockNamespace || cm.GetLabels()[LabelInventory] != stack {
			continue
		}
		enc, _, _ := unstructured.NestedString(cm.Object, "binaryData", inventoryKey)
		blob, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, fmt.Errorf("read the inventory of stack %s (ConfigMap %s/%s): %w", stack, LockNamespace, cm.GetName(), err)
		}
		s, err := decodeShard(blob)
		if err != nil {
			return nil, fmt.Errorf("read the inventory of stack %s (ConfigMap %s/%s): %w", stack, LockNamespace, cm.GetName(), err)
		}
		if s.Stack != stack || s.Shards < 1 || s.Shard < 0 || s.Shard >= s.Shards {
			return nil, fmt.Errorf("read the inventory of stack %s: ConfigMap %s/%s is not a shard of it", stack, LockNamespace, cm.GetName())
		}
		v := versions[s.Seq]
		if v == nil {
			v = &version{shards: map[int]*inventoryShard{}, n: s.Shards}
			versions[s.Seq] = v
		}
		if v.n == s.Shards {
			v.shards[s.Shard] = s
		}
	}
	var best int64 = -1
	for seq, v := range versions {
		if len(v.shards) == v.n && seq > best {
			best = seq
		}
	}
	if best < 0 {
		return nil, nil
	}
	v := versions[best]
	n := 0
	for _, s := range v.shards {
		n += len(s.Objects)
	}
	inv := &Inventory{Stack: stack, Seq: best, Objects: make(map[Key]InventoryEntry, n)}
	// Groups, kinds and namespaces repeat: one copy of each is kept.
	interned := map[string]string{}
	intern := func(s string) string {
		if c, ok := interned[s]; ok {
			return c
		}
		interned[s] = s
		return s
	}
	for _, s := range v.shards {
		inv.Commit = s.Commit
		for _, o := range s.Objects {
			ci, err := strconv.Atoi(o[5])
			if err != nil || ci < 0 || ci >= len(s.Commits) {
				return nil, fmt.Errorf("read the inventory of stack %s: shard %d names commit %q, which it does not list", stack, s.Shard, o[5])
			}
			inv.Objects[Key{Group: intern(o[0]), Kind: intern(o[1]), Namespace: intern(o[2]), Name: o[3]}] = InventoryEntry{UID: o[4], Commit: s.Commits[ci], Address: o[6]}
		}
	}
	return inv, nil
}

// StaleInventory returns the names of the ConfigMaps among cms that hold
// versions of stack's record older than seq: what a write of version seq
// deletes once its own shards are stored.
func StaleInventory(stack string, seq int64, cms []*unstructured.Unstructured) []string {
	var out []string
	for _, cm := range cms {
		if cm.GetNamespace() != LockNamespace || cm.GetLabels()[LabelInventory] != stack {
			continue
		}
		keep := strings.HasPrefix(cm.GetName(), InventoryName(stack, seq, 0)[:len(InventoryName(stack, seq, 0))-1])
		if !keep {
			out = append(out, cm.GetName())
		}
	}
	return out
}
