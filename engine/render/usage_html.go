package render

import (
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gpuform/gpuform/engine/usage"
)

// The colours of the HTML report's charts; the screenshot test looks for
// them in the rendered page.
const (
	ColorAllocated = "#2563eb"
	ColorUsed      = "#16a34a"
	ColorQuota     = "#ea580c"
)

// Chart geometry, in SVG units.
const (
	barsWidth, barsHeight  = 900, 260
	lineWidth, lineHeight  = 420, 170
	chartLeft, chartBottom = 50, 30
	maxLinePoints          = 600
)

// htmlBar is one tenant's group of bars.
type htmlBar struct {
	Tenant                       string
	X, LabelX                    float64
	AllocY, AllocH, UsedY, UsedH float64
	Allocated, Used              string
}

// htmlLines is one tenant's chart over time.
type htmlLines struct {
	Tenant                 string
	Allocated, Used, Quota string // SVG polyline points
	Max                    string
}

// htmlReport is what the template reads.
type htmlReport struct {
	From, To, Step, Currency       string
	Cost, Allocated, Used, Idle    string
	Utilization                    string
	Bars                           []htmlBar
	BarWidth, BarsMax              string
	Lines                          []htmlLines
	StartLabel, EndLabel           string
	Rows                           []usage.Row
	ColorAlloc, ColorUsed, ColorQt string
}

// UsageHTML writes the report as one self-contained HTML page (no scripts,
// fonts or images from elsewhere): totals, a bar chart of GPU-hours per
// tenant, a chart per tenant of its GPUs over time against its quota, and
// the table of the CSV.
func UsageHTML(w io.Writer, rep *usage.Report) error {
	d := htmlReport{
		From: stamp(rep.Window.From), To: stamp(rep.Window.To), Step: rep.Window.Step.String(), Currency: rep.Currency,
		Rows: rep.Rows, ColorAlloc: ColorAllocated, ColorUsed: ColorUsed, ColorQt: ColorQuota,
		StartLabel: rep.Window.From.UTC().Format("Jan 2 15:04"), EndLabel: rep.Window.To.UTC().Format("Jan 2 15:04"),
	}
	var tot usage.Row
	per := map[string]*usage.Row{}
	var order []string
	for _, r := range rep.Rows {
		tot.Allocated, tot.Used, tot.Idle, tot.Cost = tot.Allocated+r.Allocated, tot.Used+r.Used, tot.Idle+r.Idle, tot.Cost+r.Cost
		if per[r.Tenant] == nil {
			per[r.Tenant] = &usage.Row{Tenant: r.Tenant}
			order = append(order, r.Tenant)
		}
		per[r.Tenant].Allocated += r.Allocated
		per[r.Tenant].Used += r.Used
	}
	d.Cost, d.Allocated, d.Used, d.Idle, d.Utilization = money(tot.Cost), oneDecimal(tot.Allocated), oneDecimal(tot.Used), oneDecimal(tot.Idle), percent(tot.Utilization())
	d.Bars, d.BarWidth, d.BarsMax = bars(order, per)
	for _, tl := range rep.Tenants {
		d.Lines = append(d.Lines, lines(tl))
	}
	return usageTemplate.Execute(w, d)
}

func oneDecimal(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// bars lays out two bars (allocated, used) per tenant on a common scale.
func bars(order []string, per map[string]*usage.Row) ([]htmlBar, string, string) {
	top := 0.0
	for _, t := range order {
		top = math.Max(top, math.Max(per[t].Allocated, per[t].Used))
	}
	if top == 0 {
		top = 1
	}
	plotH := float64(barsHeight - chartBottom - 20)
	group := float64(barsWidth-chartLeft) / math.Max(float64(len(order)), 1)
	bw := math.Min(group*0.35, 80)
	var out []htmlBar
	for i, t := range order {
		x := chartLeft + float64(i)*group + group/2 - bw
		ah, uh := per[t].Allocated/top*plotH, per[t].Used/top*plotH
		base := float64(barsHeight - chartBottom)
		out = append(out, htmlBar{Tenant: t, X: x, LabelX: x + bw, AllocY: base - ah, AllocH: ah, UsedY: base - uh, UsedH: uh,
			Allocated: oneDecimal(per[t].Allocated), Used: oneDecimal(per[t].Used)})
	}
	return out, strconv.FormatFloat(bw, 'f', 1, 64), oneDecimal(top)
}

// lines draws a tenant's allocated, used and quota GPUs over time as SVG
// polylines, at most maxLinePoints points each.
func lines(tl usage.Timeline) htmlLines {
	top := 0.0
	for _, s := range [][]float64{tl.Allocated, tl.Used, tl.Quota} {
		for _, v := range s {
			top = math.Max(top, v)
		}
	}
	if top == 0 {
		top = 1
	}
	top *= 1.1
	return htmlLines{Tenant: tl.Tenant, Allocated: polyline(tl.Allocated, top), Used: polyline(tl.Used, top), Quota: polyline(tl.Quota, top), Max: oneDecimal(top)}
}

func polyline(vals []float64, top float64) string {
	n := len(vals)
	if n == 0 {
		return ""
	}
	stride := max(1, (n+maxLinePoints-1)/maxLinePoints)
	plotW, plotH := float64(lineWidth-chartLeft-10), float64(lineHeight-chartBottom-10)
	var b strings.Builder
	for i := 0; i < n; i += stride {
		x := chartLeft + plotW*float64(i)/math.Max(float64(n-1), 1)
		y := float64(lineHeight-chartBottom) - vals[i]/top*plotH
		b.WriteString(strconv.FormatFloat(x, 'f', 1, 64) + "," + strconv.FormatFloat(y, 'f', 1, 64) + " ")
	}
	return strings.TrimSpace(b.String())
}

var usageTemplate = template.Must(template.New("usage").Funcs(template.FuncMap{
	"hours": hours, "money": money, "percent": percent,
	"util": func(r usage.Row) string { return percent(r.Utilization()) },
}).Parse(usageHTMLTemplate))
