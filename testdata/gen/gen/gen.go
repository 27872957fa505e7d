// Package gen writes large, valid gpuform configurations for benchmarks and
// scale tests: a fixed set of priorities, MIG layouts and pools, then N
// tenants and M models spread over them. The output depends only on the
// Options, so two runs with the same flags write the same bytes.
//
// Two shapes are available. The explicit shape writes one tenant block and
// one model block per instance. The for_each shape writes the same tenants
// (tenant.team["0001"], name team-0001) and models (model.m["00001"], name
// m-00001) as two for_each blocks over locals maps. The language has no
// dynamic blocks, so a tenant block repeated by for_each has the same quota
// blocks for every instance: in that shape each tenant carries a quota block
// on every pool, empty on the pools the explicit shape leaves out.
package gen

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Options say what to generate.
type Options struct {
	// Tenants and Models are the numbers of tenant and model instances.
	Tenants, Models int
	// Nodes, when positive, is the number of GPU nodes (8 GPUs each) assumed
	// per pool: each pool's overcommit is then set so that the tenants'
	// quotas fit that capacity. Zero leaves overcommit at its default.
	Nodes int
	// ForEach writes tenants and models as for_each blocks over locals maps.
	ForEach bool
	// MaxUnavailable is every pool's max_unavailable; zero means 1.
	MaxUnavailable int
	// ChangePercent, when positive, changes that share of the tenants (every
	// tenant whose index is a multiple of 100/ChangePercent): their pods and
	// memory quotas grow, so a plan against a cluster applied without it
	// updates one ResourceQuota per changed tenant.
	ChangePercent int
}

// Size is one of the benchmark's workload sizes.
type Size struct {
	// Name is S, M or L.
	Name string
	// Tenants, Models and Nodes (GPU nodes in all, spread over the pools).
	Tenants, Models, Nodes int
}

// Sizes returns the benchmark sizes S, M and L.
func Sizes() []Size {
	return []Size{
		{Name: "S", Tenants: 100, Models: 500, Nodes: 50},
		{Name: "M", Tenants: 1000, Models: 5000, Nodes: 500},
		{Name: "L", Tenants: 5000, Models: 20000, Nodes: 2000},
	}
}

// Options returns the generator options of size s: its nodes spread over
// the pools, and max_unavailable high enough that a pool re-partitions in
// four rounds.
func (s Size) Options() Options {
	per := (s.Nodes + len(pools) - 1) / len(pools)
	return Options{Tenants: s.Tenants, Models: s.Models, Nodes: per, MaxUnavailable: max(1, per/4)}
}

// Node is a simulated GPU node of a generated configuration's pools: the
// labels GPU Feature Discovery would set and its extended-resource capacity.
type Node struct {
	Name     string
	Labels   map[string]string
	Capacity map[string]string
}

// products are the nvidia.com/gpu.product labels of each pool's nodes.
var products = map[string]string{
	"a100": "NVIDIA-A100-SXM4-80GB", "a100-small": "NVIDIA-A100-SXM4-80GB",
	"h100": "NVIDIA-H100-80GB-HBM3", "h100-mixed": "NVIDIA-H100-80GB-HBM3",
	"l40s": "NVIDIA-L40S", "t4": "Tesla-T4",
}

// Nodes returns total GPU nodes (8 GPUs each) spread round-robin over the
// pools, selected by the pools' node_selector, named <pool>-<n>.
func Nodes(total int) []Node {
	out := make([]Node, 0, total)
	counts := map[string]int{}
	for i := range total {
		p := pools[i%len(pools)]
		n := counts[p.name]
		counts[p.name]++
		labels := map[string]string{
			"gpuform.dev/node-group": p.name,
			"nvidia.com/gpu.product": products[p.name],
			"nvidia.com/gpu.count":   fmt.Sprint(GPUsPerNode),
		}
		if p.layout != nil {
			labels["nvidia.com/mig.capable"] = "true"
		}
		out = append(out, Node{
			Name:     fmt.Sprintf("%s-%04d", p.name, n),
			Labels:   labels,
			Capacity: map[string]string{"nvidia.com/gpu": fmt.Sprint(GPUsPerNode), "cpu": "128", "memory": "1Ti", "pods": "250"},
		})
	}
	return out
}

// GPUsPerNode is the number of GPUs per node assumed with Options.Nodes.
const GPUsPerNode = 8

// FileName is the configuration file Write creates.
const FileName = "main.hcl"

// Stack is the stack name of every generated configuration.
const Stack = "large"

type priority struct {
	name, preemption, description string
	value                         int
}

var priorities = []priority{
	{"realtime", "PreemptLowerPriority", "latency-critical inference", 1000000},
	{"standard", "PreemptLowerPriority", "interactive and online workloads", 10000},
	{"batch", "Never", "offline scoring and training", 1000},
}

// prioritySets are the priorities a tenant may get, with its default.
var prioritySets = []struct {
	names []string
	def   string
}{
	{[]string{"realtime", "standard", "batch"}, "standard"},
	{[]string{"standard", "batch"}, "batch"},
	{[]string{"realtime", "batch"}, "realtime"},
	{[]string{"batch"}, "batch"},
}

type deviceGroup struct {
	indexes []int
	slices  map[string]int
}

type layout struct {
	name, gpu string
	slices    map[string]int // same on every GPU; nil when devices are used
	devices   []deviceGroup
}

// perNode returns the slices of profile prof on one node of GPUsPerNode GPUs.
func (l *layout) perNode(prof string) int {
	if l.slices != nil {
		return l.slices[prof] * GPUsPerNode
	}
	n := 0
	for _, d := range l.devices {
		n += d.slices[prof] * len(d.indexes)
	}
	return n
}

// offers lists the profiles the layout offers, sorted.
func (l *layout) offers() []string {
	set := map[string]bool{}
	for p, n := range l.slices {
		if n > 0 {
			set[p] = true
		}
	}
	for _, d := range l.devices {
		for p, n := range d.slices {
			if n > 0 {
				set[p] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

var layouts = []*layout{
	{name: "a100-balanced", gpu: "A100-80GB", slices: map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
	{name: "a100-small", gpu: "A100-80GB", slices: map[string]int{"1g.10gb": 7}},
	{name: "h100-halves", gpu: "H100-80GB", slices: map[string]int{"3g.40gb": 2}},
	{name: "h100-mixed", gpu: "H100-80GB", devices: []deviceGroup{
		{indexes: []int{0, 1, 2, 3}, slices: map[string]int{"1g.10gb": 7}},
		{indexes: []int{4, 5, 6, 7}, slices: map[string]int{"2g.20gb": 1, "4g.40gb": 1}},
	}},
}

type pool struct {
	name, gpu string
	layout    *layout // nil for time-slicing
	replicas  int     // time-slicing replicas
}

var pools = []*pool{
	{name: "a100", gpu: "A100-80GB", layout: layouts[0]},
	{name: "a100-small", gpu: "NVIDIA-A100-SXM4-80GB", layout: layouts[1]},
	{name: "h100", gpu: "H100-80GB", layout: layouts[2]},
	{name: "h100-mixed", gpu: "NVIDIA-H100-80GB-HBM3", layout: layouts[3]},
	{name: "l40s", gpu: "L40S", replicas: 4},
	{name: "t4", gpu: "T4", replicas: 2},
}

var formats = []string{"pytorch", "huggingface", "onnx", "tensorflow", "sklearn"}

// quota is one tenant's quota on one pool.
type quota struct {
	pool   *pool
	slices map[string]int // MIG pools
	gpus   int            // time-sliced pools
	borrow map[string]int // borrowing_limit, may be nil
}

// distinct drops from b the MIG profiles a also has and reports whether b
// still gives a resource a does not: whole GPUs of two time-sliced pools
// are one resource, nvidia.com/gpu, as is a profile two layouts offer.
func distinct(a, b *quota) bool {
	if b.pool.layout == nil {
		return a.pool.layout != nil
	}
	for prof := range b.slices {
		if _, ok := a.slices[prof]; ok {
			delete(b.slices, prof)
		}
	}
	return len(b.slices) > 0
}

type tenant struct {
	key      string // "0001"
	quotas   []*quota
	prioSet  int
	cpu, mem string
	pods     int
	editors  bool
	tier     string
}

func (t *tenant) name() string { return "team-" + t.key }

type model struct {
	key      string // "00001"
	tenant   *tenant
	quota    *quota
	slice    string
	gpus     int
	priority string
	format   string
	min, max int
}

func (m *model) name() string { return "m-" + m.key }

func width(n int) int { return max(4, len(fmt.Sprint(n))) }

// plan builds the tenants and models; both shapes write the same plan.
func plan(o Options) ([]*tenant, []*model) {
	tw, mw := width(o.Tenants), width(o.Models)+1
	tenants := make([]*tenant, o.Tenants)
	for i := range tenants {
		t := &tenant{
			key:     fmt.Sprintf("%0*d", tw, i+1),
			prioSet: i % len(prioritySets),
			cpu:     fmt.Sprint(8 << (i % 4)),
			mem:     fmt.Sprintf("%dGi", 32<<(i%4)),
			pods:    10 + i%50,
			editors: i%2 == 0,
			tier:    []string{"gold", "silver", "bronze"}[i%3],
		}
		first := i % len(pools)
		ps := []*pool{pools[first]}
		if i%3 != 0 {
			second := (first + 1 + (i/len(pools))%(len(pools)-1)) % len(pools)
			ps = append(ps, pools[second])
		}
		for j, p := range ps {
			q := &quota{pool: p}
			if p.layout != nil {
				offers := p.layout.offers()
				q.slices = map[string]int{offers[(i+j)%len(offers)]: 1 + i%3}
				if len(offers) > 1 && i%2 == 1 {
					q.slices[offers[(i+j+1)%len(offers)]] = 1
				}
			} else {
				q.gpus = 1 + i%4
			}
			if j > 0 && !distinct(t.quotas[0], q) {
				// A tenant's quota of one resource on two pools is
				// refused under scheduler none (a namespace quota
				// cannot tell the pools apart).
				continue
			}
			if i%5 == 0 {
				q.borrow = map[string]int{}
				if p.layout != nil {
					for prof := range q.slices {
						q.borrow[prof] = 1
					}
				} else {
					q.borrow["gpus"] = 2
				}
			}
			t.quotas = append(t.quotas, q)
		}
		if o.ChangePercent > 0 && i%max(1, 100/o.ChangePercent) == 0 {
			t.pods += 100
			t.mem = fmt.Sprintf("%dGi", 64<<(i%4))
		}
		tenants[i] = t
	}
	var models []*model
	if len(tenants) == 0 {
		return tenants, nil
	}
	models = make([]*model, o.Models)
	for j := range models {
		t := tenants[j%len(tenants)]
		round := j / len(tenants)
		q := t.quotas[round%len(t.quotas)]
		m := &model{
			key:    fmt.Sprintf("%0*d", mw, j+1),
			tenant: t,
			quota:  q,
			format: formats[j%len(formats)],
			min:    1 + j%2,
		}
		m.max = m.min + j%4
		if q.pool.layout != nil {
			profs := make([]string, 0, len(q.slices))
			for p := range q.slices {
				profs = append(profs, p)
			}
			sort.Strings(profs)
			m.slice = profs[round%len(profs)]
		} else {
			m.gpus = 1 + round%q.gpus
		}
		set := prioritySets[t.prioSet].names
		m.priority = set[(j/len(tenants)+j)%len(set)]
		models[j] = m
	}
	return tenants, models
}

// overcommits returns, per pool, the overcommit that lets the quotas fit
// o.Nodes nodes (1 when they fit without).
func overcommits(o Options, tenants []*tenant) map[*pool]float64 {
	out := map[*pool]float64{}
	if o.Nodes <= 0 {
		return out
	}
	totals := map[*pool]map[string]int{}
	for _, t := range tenants {
		for _, q := range t.quotas {
			m := totals[q.pool]
			if m == nil {
				m = map[string]int{}
				totals[q.pool] = m
			}
			if q.pool.layout != nil {
				for prof, n := range q.slices {
					m[prof] += n
				}
			} else {
				m["gpus"] += q.gpus
			}
		}
	}
	for _, p := range pools {
		ratio := 1.0
		for res, n := range totals[p] {
			var capacity int
			if p.layout != nil {
				capacity = p.layout.perNode(res) * o.Nodes
			} else {
				capacity = GPUsPerNode * p.replicas * o.Nodes
			}
			if capacity > 0 {
				ratio = max(ratio, float64(n)/float64(capacity))
			}
		}
		out[p] = math.Ceil(ratio*10) / 10
	}
	return out
}

// Generate returns the configuration (the content of main.hcl) for o.
func Generate(o Options) ([]byte, error) {
	if o.Tenants < 0 || o.Models < 0 || o.Nodes < 0 {
		return nil, fmt.Errorf("tenants, models and nodes must not be negative")
	}
	if o.Models > 0 && o.Tenants == 0 {
		return nil, fmt.Errorf("models need at least one tenant")
	}
	tenants, models := plan(o)
	w := &bytes.Buffer{}
	shape := "explicit blocks"
	if o.ForEach {
		shape = "for_each blocks over locals maps"
	}
	fmt.Fprintf(w, "# Generated by go run ./testdata/gen -tenants %d -models %d", o.Tenants, o.Models)
	if o.Nodes > 0 {
		fmt.Fprintf(w, " -nodes %d", o.Nodes)
	}
	if o.MaxUnavailable > 1 {
		fmt.Fprintf(w, " -max-unavailable %d", o.MaxUnavailable)
	}
	if o.ChangePercent > 0 {
		fmt.Fprintf(w, " -change %d", o.ChangePercent)
	}
	if o.ForEach {
		fmt.Fprint(w, " -foreach")
	}
	fmt.Fprintf(w, "\n# %d tenants and %d models as %s. Do not edit.\n\n", o.Tenants, o.Models, shape)
	fmt.Fprintf(w, "gpuform {\n  stack = %q\n  scheduler = \"kueue\"\n}\n\n", Stack)
	writeCommon(w, overcommits(o, tenants), o.MaxUnavailable)
	if o.ForEach {
		writeForEach(w, tenants, models)
	} else {
		writeExplicit(w, tenants, models)
	}
	return align(w.Bytes()), nil
}

// alignable matches a one-line argument: indent, name, and the rest from " =".
var alignable = regexp.MustCompile(`^( *)("[^"]*"|[A-Za-z_][A-Za-z0-9_-]*) (= .*[^{\[(])$`)

// align lines up the equals signs of consecutive one-line arguments at the
// same depth, as gpuform fmt (hclwrite) does, so the output is canonical.
func align(src []byte) []byte {
	lines := bytes.Split(src, []byte("\n"))
	out := make([]byte, 0, len(src)+len(src)/4)
	for i := 0; i < len(lines); {
		m := alignable.FindSubmatch(lines[i])
		if m == nil {
			out = append(out, lines[i]...)
			if i < len(lines)-1 {
				out = append(out, '\n')
			}
			i++
			continue
		}
		indent, j, width := string(m[1]), i, 0
		var run [][][]byte
		for ; j < len(lines); j++ {
			mj := alignable.FindSubmatch(lines[j])
			if mj == nil || string(mj[1]) != indent {
				break
			}
			run = append(run, mj)
			width = max(width, len(mj[2]))
		}
		for _, mj := range run {
			out = append(out, mj[1]...)
			out = append(out, mj[2]...)
			out = append(out, bytes.Repeat([]byte{' '}, width-len(mj[2])+1)...)
			out = append(out, mj[3]...)
			out = append(out, '\n')
		}
		i = j
	}
	return out
}

// Write generates the configuration into dir/main.hcl, creating dir.
func Write(dir string, o Options) error {
	src, err := Generate(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FileName), src, 0o644)
}

func writeCommon(w *bytes.Buffer, over map[*pool]float64, maxUnavailable int) {
	for _, p := range priorities {
		fmt.Fprintf(w, "priority %q {\n  value = %d\n  preemption = %q\n  description = %q\n}\n\n", p.name, p.value, p.preemption, p.description)
	}
	for _, l := range layouts {
		fmt.Fprintf(w, "mig_layout %q {\n  gpu = %q\n", l.name, l.gpu)
		if l.slices != nil {
			fmt.Fprintf(w, "  slices = %s\n", intMap(l.slices))
		}
		for _, d := range l.devices {
			idx := make([]string, len(d.indexes))
			for i, x := range d.indexes {
				idx[i] = fmt.Sprint(x)
			}
			fmt.Fprintf(w, "  device {\n    indexes = [%s]\n    slices = %s\n  }\n", strings.Join(idx, ", "), intMap(d.slices))
		}
		fmt.Fprint(w, "}\n\n")
	}
	for _, p := range pools {
		fmt.Fprintf(w, "pool %q {\n  gpu = %q\n  node_selector = { \"gpuform.dev/node-group\" = %q }\n", p.name, p.gpu, p.name)
		if p.layout != nil {
			fmt.Fprintf(w, "  mig_layout = mig_layout.%s\n", p.layout.name)
		} else {
			fmt.Fprintf(w, "  time_slicing {\n    replicas = %d\n  }\n", p.replicas)
		}
		if oc, ok := over[p]; ok {
			fmt.Fprintf(w, "  overcommit = %s\n", fmt.Sprintf("%.1f", oc))
		}
		fmt.Fprintf(w, "  max_unavailable = %d\n}\n\n", max(1, maxUnavailable))
	}
}

func writeExplicit(w *bytes.Buffer, tenants []*tenant, models []*model) {
	for _, t := range tenants {
		fmt.Fprintf(w, "tenant %q {\n", t.name())
		fmt.Fprintf(w, "  labels = { team = %q, tier = %q }\n", t.name(), t.tier)
		for _, q := range t.quotas {
			fmt.Fprintf(w, "  quota %q {\n", q.pool.name)
			if q.pool.layout != nil {
				fmt.Fprintf(w, "    slices = %s\n", intMap(q.slices))
			} else {
				fmt.Fprintf(w, "    gpus = %d\n", q.gpus)
			}
			if q.borrow != nil {
				fmt.Fprintf(w, "    borrowing_limit = %s\n", intMap(q.borrow))
			}
			fmt.Fprint(w, "  }\n")
		}
		fmt.Fprintf(w, "  cpu = %q\n  memory = %q\n  pods = %d\n", t.cpu, t.mem, t.pods)
		set := prioritySets[t.prioSet]
		refs := make([]string, len(set.names))
		for i, n := range set.names {
			refs[i] = "priority." + n
		}
		fmt.Fprintf(w, "  priorities = [%s]\n  default_priority = priority.%s\n", strings.Join(refs, ", "), set.def)
		fmt.Fprintf(w, "  admins = [%q]\n", "group:"+t.name()+"-admins")
		if t.editors {
			fmt.Fprintf(w, "  editors = [%q]\n", "group:"+t.name()+"-dev")
		}
		fmt.Fprint(w, "}\n\n")
	}
	for _, m := range models {
		fmt.Fprintf(w, "model %q {\n  tenant = tenant.%s\n  pool = pool.%s\n", m.name(), m.tenant.name(), m.quota.pool.name)
		if m.slice != "" {
			fmt.Fprintf(w, "  slice = %q\n", m.slice)
		} else {
			fmt.Fprintf(w, "  gpus = %d\n", m.gpus)
		}
		fmt.Fprintf(w, "  format = %q\n  storage_uri = %q\n", m.format, storageURI(m))
		fmt.Fprintf(w, "  replicas = { min = %d, max = %d }\n  priority = priority.%s\n}\n\n", m.min, m.max, m.priority)
	}
}

func storageURI(m *model) string {
	return fmt.Sprintf("s3://models/%s/%s/v%d", m.tenant.name(), m.name(), 1+len(m.key)%3)
}

func writeForEach(w *bytes.Buffer, tenants []*tenant, models []*model) {
	fmt.Fprint(w, "locals {\n")
	fmt.Fprint(w, "  pools = {\n")
	for _, p := range pools {
		fmt.Fprintf(w, "    %q = pool.%s\n", p.name, p.name)
	}
	fmt.Fprint(w, "  }\n  priorities = {\n")
	for _, p := range priorities {
		fmt.Fprintf(w, "    %s = priority.%s\n", p.name, p.name)
	}
	fmt.Fprint(w, "  }\n\n  tenants = {\n")
	for _, t := range tenants {
		byPool := map[*pool]*quota{}
		for _, q := range t.quotas {
			byPool[q.pool] = q
		}
		fmt.Fprintf(w, "    %q = {\n      tier = %q\n", t.key, t.tier)
		fmt.Fprintf(w, "      cpu = %q\n      memory = %q\n      pods = %d\n", t.cpu, t.mem, t.pods)
		set := prioritySets[t.prioSet]
		fmt.Fprintf(w, "      priorities = [%s]\n      default_priority = %q\n", quoted(set.names), set.def)
		if t.editors {
			fmt.Fprintf(w, "      editors = [%q]\n", "group:"+t.name()+"-dev")
		} else {
			fmt.Fprint(w, "      editors = []\n")
		}
		var quota, borrow []string
		for _, q := range t.quotas {
			if q.pool.layout != nil {
				quota = append(quota, fmt.Sprintf("%q = %s", q.pool.name, intMap(q.slices)))
			} else {
				quota = append(quota, fmt.Sprintf("%q = %d", q.pool.name, q.gpus))
			}
			if q.borrow != nil {
				borrow = append(borrow, fmt.Sprintf("%q = %s", q.pool.name, intMap(q.borrow)))
			}
		}
		fmt.Fprintf(w, "      quota = %s\n      borrow = %s\n    }\n", object(quota), object(borrow))
	}
	fmt.Fprint(w, "  }\n\n  models = {\n")
	for _, m := range models {
		fmt.Fprintf(w, "    %q = {\n      tenant = %q\n      pool = %q\n", m.key, m.tenant.key, m.quota.pool.name)
		if m.slice != "" {
			fmt.Fprintf(w, "      slice = %q\n      gpus = null\n", m.slice)
		} else {
			fmt.Fprintf(w, "      slice = null\n      gpus = %d\n", m.gpus)
		}
		fmt.Fprintf(w, "      format = %q\n      storage_uri = %q\n", m.format, storageURI(m))
		fmt.Fprintf(w, "      min = %d\n      max = %d\n      priority = %q\n    }\n", m.min, m.max, m.priority)
	}
	fmt.Fprint(w, "  }\n}\n\n")

	fmt.Fprint(w, "tenant \"team\" {\n  for_each = local.tenants\n")
	fmt.Fprint(w, "  labels = { team = \"team-${each.key}\", tier = each.value.tier }\n")
	for _, p := range pools {
		fmt.Fprintf(w, "  quota %q {\n", p.name)
		if p.layout != nil {
			fmt.Fprintf(w, "    slices = lookup(each.value.quota, %q, {})\n", p.name)
		} else {
			fmt.Fprintf(w, "    gpus = lookup(each.value.quota, %q, 0)\n", p.name)
		}
		fmt.Fprintf(w, "    borrowing_limit = lookup(each.value.borrow, %q, {})\n  }\n", p.name)
	}
	fmt.Fprint(w, "  cpu = each.value.cpu\n  memory = each.value.memory\n  pods = each.value.pods\n")
	fmt.Fprint(w, "  priorities = [for p in each.value.priorities : local.priorities[p]]\n")
	fmt.Fprint(w, "  default_priority = local.priorities[each.value.default_priority]\n")
	fmt.Fprint(w, "  admins = [\"group:team-${each.key}-admins\"]\n  editors = each.value.editors\n}\n\n")

	fmt.Fprint(w, "model \"m\" {\n  for_each = local.models\n")
	fmt.Fprint(w, "  tenant = tenant.team[each.value.tenant]\n  pool = local.pools[each.value.pool]\n")
	fmt.Fprint(w, "  slice = each.value.slice\n  gpus = each.value.gpus\n")
	fmt.Fprint(w, "  format = each.value.format\n  storage_uri = each.value.storage_uri\n")
	fmt.Fprint(w, "  replicas = { min = each.value.min, max = each.value.max }\n")
	fmt.Fprint(w, "  priority = local.priorities[each.value.priority]\n}\n")
}

// object writes an HCL object from its "key = value" items.
func object(items []string) string {
	if len(items) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(items, ", ") + " }"
}

// intMap writes an HCL object of profile = count in key order.
func intMap(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q = %d", k, m[k])
	}
	return object(parts)
}

func quoted(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
