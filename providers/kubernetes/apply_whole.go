package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuform/gpuform/engine"
)

// ApplyWhole writes obj, of a kind gpuform owns whole, so that the object
// is obj whole: server-side apply with force (which takes over the fields
// obj sets from any other manager), then a JSON patch that removes every
// field another manager set and obj does not (engine.ForeignPaths, read
// from the managedFields of the object the apply answered with, each one
// that is there). Server-side apply never
// removes another manager's field; the patch does, and the API server then
// drops the field from that manager's entry (and the entry once empty).
//
// The patch first tests the resourceVersion the apply answered with, so
// it removes nothing from an object someone changed since (the change
// fails, and the next plan shows what is left). Its answer is checked
// again: a foreign field left is an error, never a silent success.
func (c *Client) ApplyWhole(ctx context.Context, obj *unstructured.Unstructured) error {
	_, err := c.ApplyWholeUID(ctx, obj)
	return err
}

// ApplyWholeUID is ApplyWhole, and returns the UID of the object written
// (for the stack's record).
func (c *Client) ApplyWholeUID(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	k := engine.KeyOf(obj)
	body, err := c.apply(ctx, obj, true, wholeObject)
	if err != nil {
		return "", err
	}
	live, err := decodeObject(body)
	if err != nil {
		return "", fmt.Errorf("apply %s: read the answer: %w", k, err)
	}
	if taken := engine.TakenPaths(live, obj.Object); len(taken) > 0 {
		return "", fmt.Errorf("apply %s: fields gpuform sets are still another manager's after a forced apply: %s", k, formatPaths(taken))
	}
	paths := engine.ForeignFields(live, obj.Object)
	if len(paths) == 0 {
		return string(live.GetUID()), nil
	}
	patch, err := removePatch(live.GetResourceVersion(), paths)
	if err != nil {
		return "", fmt.Errorf("apply %s: %w", k, err)
	}
	path, err := c.objectPath(obj)
	if err != nil {
		return "", c.explain("apply "+k.String(), err)
	}
	res := c.typed.CoreV1().RESTClient().Patch(types.JSONPatchType).AbsPath(path...).
		Param("fieldManager", engine.FieldManager).
		SetHeader("Accept", wholeObject).
		Body(patch).Do(ctx)
	if err = res.Error(); err == nil {
		body, _ = res.Raw()
	}
	if err != nil {
		return "", fmt.Errorf("apply %s: remove the fields other managers set (%s): %w", k, formatPaths(paths), err)
	}
	if live, err = decodeObject(body); err != nil {
		return "", fmt.Errorf("apply %s: read the answer: %w", k, err)
	}
	if left := engine.ForeignFields(live, obj.Object); len(left) > 0 {
		return "", fmt.Errorf("apply %s: fields other managers set are still there after their removal: %s", k, formatPaths(left))
	}
	return string(live.GetUID()), nil
}

// wholeObject asks the API server for the whole object in its answer: the
// fields another manager set are looked up in it (a managedFields entry
// may name a field that is gone, which a JSON patch cannot remove).
const wholeObject = "application/json"

// decodeObject decodes the API server's answer to a write.
func decodeObject(body []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(body, &u.Object); err != nil {
		return nil, err
	}
	return u, nil
}

// removePatch is the JSON patch (RFC 6902) that removes each of paths
// from the object at resourceVersion rv, and fails on any other version.
func removePatch(rv string, paths [][]string) ([]byte, error) {
	if rv == "" {
		return nil, fmt.Errorf("the answer has no resourceVersion")
	}
	ops := make([]map[string]string, 0, len(paths)+1)
	ops = append(ops, map[string]string{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
	for _, p := range paths {
		ops = append(ops, map[string]string{"op": "remove", "path": jsonPointer(p)})
	}
	return json.Marshal(ops)
}

// jsonPointer is the JSON pointer (RFC 6901) of a field path.
func jsonPointer(path []string) string {
	var b strings.Builder
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, p := range path {
		b.WriteByte('/')
		b.WriteString(esc.Replace(p))
	}
	return b.String()
}

// formatPaths lists field paths as a plan shows them.
func formatPaths(paths [][]string) string {
	s := make([]string, len(paths))
	for i, p := range paths {
		s[i] = engine.FormatPath(p)
	}
	return strings.Join(s, ", ")
}
