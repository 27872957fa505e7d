package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

const fieldManager = "kueue-harness"

var (
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// Webhook configuration kinds, by the kind names in webhooks.yaml.
	webhookGVRs = map[string]schema.GroupVersionResource{
		"MutatingWebhookConfiguration":   {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
		"ValidatingWebhookConfiguration": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	}
)

// readYAML decodes every document of a multi-document YAML file.
func readYAML(path string) ([]*unstructured.Unstructured, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(src), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if len(m) != 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// applyCRDs server-side applies every CRD in dir, creates the namespace
// kueue-system, and waits until discovery serves every CRD's versions.
func applyCRDs(ctx context.Context, cfg *rest.Config, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: build with `make kueue`", dir)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	want := map[string]string{} // group/version -> a kind
	for _, f := range files {
		objs, err := readYAML(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if _, err := dyn.Resource(crdGVR).Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
				return fmt.Errorf("apply %s: %w", o.GetName(), err)
			}
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
			for _, v := range versions {
				if name, _ := v.(map[string]any)["name"].(string); name != "" {
					want[group+"/"+name+"/"+kind] = kind
				}
			}
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace kueue-system: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for key, kind := range want {
		gv := filepath.Dir(key)
		for !servesKind(dc, gv, kind) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s %s not served: %w", kind, gv, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func servesKind(dc *discovery.DiscoveryClient, gv, kind string) bool {
	rl, err := dc.ServerResourcesForGroupVersion(gv)
	if err != nil {
		return false
	}
	for _, r := range rl.APIResources {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// webhookConfigs are the webhook configurations registered, to remove on exit.
type webhookConfigs struct {
	dyn   dynamic.Interface
	names map[string][]string // kind -> names
}

// remove deletes the registered webhook configurations.
func (w *webhookConfigs) remove(ctx context.Context) {
	if w == nil {
		return
	}
	for kind, names := range w.names {
		for _, n := range names {
			_ = w.dyn.Resource(webhookGVRs[kind]).Delete(ctx, n, metav1.DeleteOptions{})
		}
	}
}

// registerWebhooks waits until the manager's webhook server answers, then
// applies the webhook configurations of path pointed at url: each
// webhook's service reference becomes url + its path, with caPEM as the CA
// bundle. Webhooks whose path this server does not serve (integrations not
// linked in) are left out, and the pod and deployment webhooks skip
// kube-system and kueue-system as Kueue's kustomization does.
func registerWebhooks(ctx context.Context, cfg *rest.Config, mgr ctrl.Manager, path, url string, caPEM []byte, done <-chan error) (*webhookConfigs, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	// A served path answers an empty review with 200 or 400; others 404.
	probe := func(p string) int {
		resp, err := client.Post(url+p, "application/json", bytes.NewReader([]byte("{}")))
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for probe("/healthz-probe") == 0 {
		select {
		case err := <-done:
			return nil, fmt.Errorf("manager stopped: %v", err)
		case <-ctx.Done():
			return nil, fmt.Errorf("webhook server not up: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("caches did not sync")
	}
	objs, err := readYAML(path)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	out := &webhookConfigs{dyn: dyn, names: map[string][]string{}}
	for _, o := range objs {
		gvr, ok := webhookGVRs[o.GetKind()]
		if !ok {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		var kept []any
		for _, h := range hooks {
			m := h.(map[string]any)
			p, _, _ := unstructured.NestedString(m, "clientConfig", "service", "path")
			if code := probe(p); code == http.StatusNotFound || code == 0 {
				continue
			}
			m["clientConfig"] = map[string]any{"url": url + p, "caBundle": base64.StdEncoding.EncodeToString(caPEM)}
			switch name, _ := m["name"].(string); name {
			case "mpod.kb.io", "vpod.kb.io", "mdeployment.kb.io", "vdeployment.kb.io":
				m["namespaceSelector"] = map[string]any{"matchExpressions": []any{map[string]any{
					"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system", "kueue-system"},
				}}}
			}
			kept = append(kept, m)
		}
		sort.Slice(kept, func(i, j int) bool {
			return kept[i].(map[string]any)["name"].(string) < kept[j].(map[string]any)["name"].(string)
		})
		name := "kueue-" + o.GetName()
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "admissionregistration.k8s.io/v1", "kind": o.GetKind(),
			"metadata": map[string]any{"name": name}, "webhooks": kept,
		}}
		if _, err := dyn.Resource(gvr).Apply(ctx, name, obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", o.GetKind(), name, err)
		}
		out.names[o.GetKind()] = append(out.names[o.GetKind()], name)
	}
	return out, nil
}
