package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpuform/gpuform/engine"
)

// podPage is how many pods one page of the pods' LIST holds: the pods of
// a page are decoded whole, so a page bounds what the LIST holds at once.
const podPage = 500

// tenantNamespaces are the namespaces of d's tenants: its Namespaces.
func tenantNamespaces(d *engine.Desired) map[string]bool {
	out := map[string]bool{}
	for _, o := range d.Objects {
		if k := o.Key(); k.Kind == "Namespace" && k.Group == "" {
			out[k.Name] = true
		}
	}
	return out
}

// tenantPods reads the running and pending pods of namespaces for
// engine.PodWarnings: one LIST of every namespace's pods, page by page,
// keeping of each pod in namespaces only what the warnings read, at most
// engine.MaxLivePods (truncated then says so). Nothing when namespaces is
// empty.
func (c *Client) tenantPods(ctx context.Context, namespaces map[string]bool) (pods []engine.LivePod, truncated bool, err error) {
	if len(namespaces) == 0 {
		return nil, false, nil
	}
	pods = []engine.LivePod{}
	opts := metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed", Limit: podPage}
	for {
		list, err := c.typed.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, false, c.explain("list the pods of the stack's tenants", err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			if !namespaces[p.Namespace] {
				continue
			}
			if len(pods) == engine.MaxLivePods {
				return pods, true, nil
			}
			pods = append(pods, livePod(p))
		}
		if list.Continue == "" {
			return pods, false, nil
		}
		opts.Continue = list.Continue
	}
}

// livePod is what engine.PodWarnings reads of p.
func livePod(p *corev1.Pod) engine.LivePod {
	lp := engine.LivePod{Namespace: p.Namespace, Name: p.Name, PriorityClass: p.Spec.PriorityClassName, Pool: p.Spec.NodeSelector[engine.LabelPool]}
	if p.Spec.RuntimeClassName != nil {
		lp.RuntimeClass = *p.Spec.RuntimeClassName
	}
	lp.GPU = podUsesGPU(p)
	return lp
}
