package usage

// Exporters whose series the report reads.
const (
	ExporterKSM  = "kube-state-metrics"
	ExporterDCGM = "the DCGM exporter (dcgm-exporter)"
)

// Input is one query of the report: the series it reads and the exporter
// that writes them.
type Input struct {
	Query    string
	Series   []string
	Exporter string
}

// Inputs are the report's queries, in the order Compute runs them.
func Inputs() []Input {
	return []Input{
		{Query: QueryNodes, Series: []string{"kube_node_labels"}, Exporter: ExporterKSM},
		{Query: QueryAllocated, Series: []string{"kube_pod_container_resource_requests", "kube_pod_status_phase"}, Exporter: ExporterKSM},
		{Query: QueryUsed, Series: []string{"DCGM_FI_DEV_GPU_UTIL"}, Exporter: ExporterDCGM},
		{Query: QueryUsedMIG, Series: []string{"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}, Exporter: ExporterDCGM},
		{Query: QueryQuota, Series: []string{"kube_resourcequota"}, Exporter: ExporterKSM},
	}
}

// NoInput reports whether every query of the report came back empty:
// Prometheus has none of the series it reads over the window, and its
// zeros would mean nothing.
func (r *Report) NoInput() bool { return len(r.Missing) == len(Inputs()) }

// MissingExporters are the exporters none of whose queries returned a
// series, with those queries' series, in the order of Inputs.
func (r *Report) MissingExporters() []Input {
	missing := map[string]bool{}
	for _, in := range r.Missing {
		missing[in.Query] = true
	}
	var out []Input
	idx := map[string]int{}
	whole := map[string]bool{}
	for _, in := range Inputs() {
		if _, ok := whole[in.Exporter]; !ok {
			whole[in.Exporter] = true
		}
		whole[in.Exporter] = whole[in.Exporter] && missing[in.Query]
	}
	for _, in := range Inputs() {
		if !whole[in.Exporter] {
			continue
		}
		i, ok := idx[in.Exporter]
		if !ok {
			i = len(out)
			idx[in.Exporter] = i
			out = append(out, Input{Exporter: in.Exporter})
		}
		out[i].Series = append(out[i].Series, in.Series...)
	}
	return out
}
