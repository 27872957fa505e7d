package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gpuform/gpuform/engine"
)

// Apply writes obj with server-side apply as field manager gpuform. force
// takes over fields another manager owns; use it only for objects gpuform
// owns or adopts.
//
// The patch asks for strict field validation (fieldValidation=Strict): a
// field the kind's schema does not know, or a duplicate one, fails the
// change instead of being dropped with a warning that nobody reads.
//
// The patch goes out raw and asks for the result as PartialObjectMetadata:
// apply reads only the UID of the result, so the API server encodes only
// the object's metadata, and only the UID is decoded here.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, force bool) error {
	_, err := c.apply(ctx, obj, force, metadataOnly)
	return err
}

// ApplyUID is Apply, and returns the UID of the object written, read from
// the metadata the API server answers with (for the stack's record).
func (c *Client) ApplyUID(ctx context.Context, obj *unstructured.Unstructured, force bool) (string, error) {
	body, err := c.apply(ctx, obj, force, metadataOnly)
	if err != nil {
		return "", err
	}
	var written struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &written); err != nil {
		return "", fmt.Errorf("apply %s: read the answer: %w", engine.KeyOf(obj), err)
	}
	return written.Metadata.UID, nil
}

// apply is Apply, returning the API server's answer in the media type
// accept asks for.
func (c *Client) apply(ctx context.Context, obj *unstructured.Unstructured, force bool, accept string) ([]byte, error) {
	k := engine.KeyOf(obj)
	path, err := c.objectPath(obj)
	if err != nil {
		return nil, c.explain("apply "+k.String(), err)
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, fmt.Errorf("apply %s: encode: %w", k, err)
	}
	req := c.typed.CoreV1().RESTClient().Patch(types.ApplyPatchType).AbsPath(path...).
		Param("fieldManager", engine.FieldManager).
		Param("fieldValidation", metav1.FieldValidationStrict).
		SetHeader("Accept", accept).
		Body(data)
	if force {
		req = req.Param("force", "true")
	}
	// Error, not Raw's error: it reads the Status the server answered
	// with (the unknown field strict validation names).
	res := req.Do(ctx)
	if err := res.Error(); err != nil {
		return nil, fmt.Errorf("apply %s: %w", k, err)
	}
	body, _ := res.Raw()
	return body, nil
}

// objectPath is the API path of obj.
func (c *Client) objectPath(obj *unstructured.Unstructured) ([]string, error) {
	m, err := c.mapping(engine.Kind{GroupVersionKind: obj.GroupVersionKind()})
	if err != nil {
		return nil, err
	}
	path := resourcePath(m.Resource)
	if ns := obj.GetNamespace(); ns != "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		path = append(path[:len(path)-1], "namespaces", ns, m.Resource.Resource)
	}
	return append(path, obj.GetName()), nil
}

// metadataOnly asks the API server for a PartialObjectMetadata response
// (plain JSON where it cannot transform one).
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// Delete removes the object with key k and apiVersion with foreground
// propagation, so its dependents go first.
func (c *Client) Delete(ctx context.Context, k engine.Key, apiVersion string) error {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("delete %s: %w", k, err)
	}
	m, err := c.mapper.RESTMapping(schemaGroupKind(k), gv.Version)
	if err != nil {
		return c.explain("delete "+k.String(), err)
	}
	prop := deletePropagation(k)
	var ri dynamic.ResourceInterface = c.dynamic.Resource(m.Resource)
	if k.Namespace != "" {
		ri = c.dynamic.Resource(m.Resource).Namespace(k.Namespace)
	}
	if err := ri.Delete(ctx, k.Name, metav1.DeleteOptions{PropagationPolicy: &prop}); err != nil {
		return fmt.Errorf("delete %s: %w", k, err)
	}
	if grantsAccess(k) {
		return waitAccessGone(ctx, ri, k)
	}
	return nil
}

func schemaGroupKind(k engine.Key) schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}
