package capacity

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// decodeConfigMap finds the ConfigMap called name among items (the one in
// namespace, else the only one) and decodes the YAML document under key
// into into. source is the ConfigMap's namespace/name once one is found;
// problem says why the configuration could not be read ("" when it was).
// owner names whose configuration it is, for the problem.
func decodeConfigMap(items []*unstructured.Unstructured, name, namespace, key, owner string, into any) (source, problem string) {
	var found []*unstructured.Unstructured
	for _, u := range items {
		if u.GetName() == name {
			found = append(found, u)
		}
	}
	if i := slices.IndexFunc(found, func(u *unstructured.Unstructured) bool { return u.GetNamespace() == namespace }); i >= 0 {
		found = found[i : i+1]
	}
	switch len(found) {
	case 0:
		return "", fmt.Sprintf("no ConfigMap %s in %s or another namespace", name, namespace)
	case 1:
	default:
		var where []string
		for _, u := range found {
			where = append(where, u.GetNamespace())
		}
		return "", fmt.Sprintf("ConfigMaps %s in namespaces %s, none in %s: which is %s's is not known", name, strings.Join(where, ", "), namespace, owner)
	}
	u := found[0]
	source = u.GetNamespace() + "/" + u.GetName()
	doc, ok, _ := unstructured.NestedString(u.Object, "data", key)
	if !ok {
		return source, fmt.Sprintf("ConfigMap %s has no key %s", source, key)
	}
	if err := yaml.Unmarshal([]byte(doc), into); err != nil {
		return source, fmt.Sprintf("ConfigMap %s, key %s: %v", source, key, err)
	}
	return source, ""
}
