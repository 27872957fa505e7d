package engine_test

import (
	"strings"

	"github.com/gpuform/gpuform/config"
)

// fleetOnly are the attributes only a fleet (named cluster blocks) takes.
var fleetOnly = map[string]bool{
	"cluster.labels": true, "cluster.values": true, "cluster.role": true, "cluster.kubeconfig_secret": true,
	"pool.clusters": true, "pool.cluster_selector": true,
	"tenant.clusters": true, "tenant.cluster_selector": true, "tenant.dispatch": true,
	"model.clusters": true, "model.cluster_selector": true,
}

// asFleet turns the configuration src of case c, when c's attribute is
// fleetOnly, into a fleet of members a and b, loaded for a: the subject
// cluster block becomes member a (with a context, so that its block shows
// when the attribute is null), or a is the manager beside the subject.
// Every sample places its block on a, so that it is in a's configuration.
func asFleet(c attrCase, src string) (string, config.Options) {
	if !fleetOnly[c.path()] {
		return src, config.Options{}
	}
	const b = "cluster \"b\" {\n  labels = { k = \"b\" }\n  kubeconfig_secret = \"b\"\n}\n"
	if c.top.Type == config.TypeCluster {
		// context keeps a's block shown when the attribute is null.
		return b + strings.Replace(src, "cluster {\n", "cluster \"a\" {\n  context = \"a\"\n", 1), config.Options{Cluster: "a"}
	}
	const a = "cluster \"a\" {\n  role = \"manager\"\n  labels = { k = \"a\", z = \"a\" }\n}\n"
	return a + b + src, config.Options{Cluster: "a"}
}
