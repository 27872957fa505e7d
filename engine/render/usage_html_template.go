package render

// usageHTMLTemplate is the page of UsageHTML: inline CSS and SVG only.
const usageHTMLTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GPU usage {{.From}} to {{.To}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #111827; background: #fff; max-width: 960px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.sub { color: #6b7280; font-size: 13px; }
.cards { display: flex; gap: 12px; margin-top: 16px; }
.card { flex: 1; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px; }
.card b { display: block; font-size: 22px; }
.card span { color: #6b7280; font-size: 12px; }
.legend span { display: inline-block; margin-right: 16px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.grid { display: flex; flex-wrap: wrap; gap: 12px; }
.tenant { border: 1px solid #e5e7eb; border-radius: 8px; padding: 6px; }
.tenant h3 { font-size: 13px; margin: 2px 4px; }
svg text { font-size: 11px; fill: #374151; }
table { border-collapse: collapse; font-size: 12px; margin-top: 8px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e5e7eb; text-align: right; }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align: left; }
</style>
</head>
<body>
<h1>GPU usage and cost</h1>
<div class="sub">{{.From}} to {{.To}}, sampled every {{.Step}}; costs in {{.Currency}}</div>
<div class="cards">
<div class="card"><b>{{.Cost}} {{.Currency}}</b><span>cost of allocated GPUs</span></div>
<div class="card"><b>{{.Allocated}}</b><span>GPU-hours allocated</span></div>
<div class="card"><b>{{.Used}}</b><span>GPU-hours used ({{.Utilization}})</span></div>
<div class="card"><b>{{.Idle}}</b><span>GPU-hours of idle quota</span></div>
</div>

<h2>GPU-hours per tenant</h2>
<div class="legend"><span><i style="background:{{.ColorAlloc}}"></i>allocated</span><span><i style="background:{{.ColorUsed}}"></i>used</span></div>
<svg id="bars" width="900" height="260" viewBox="0 0 900 260" role="img" aria-label="GPU-hours per tenant">
<line x1="50" y1="230" x2="900" y2="230" stroke="#9ca3af"/>
<text x="44" y="24" text-anchor="end">{{.BarsMax}}</text><text x="44" y="230" text-anchor="end">0</text>
{{range .Bars}}<g><title>{{.Tenant}}: {{.Allocated}} GPU-h allocated, {{.Used}} used</title>
<rect x="{{.X}}" y="{{.AllocY}}" width="{{$.BarWidth}}" height="{{.AllocH}}" fill="{{$.ColorAlloc}}"/>
<rect x="{{.LabelX}}" y="{{.UsedY}}" width="{{$.BarWidth}}" height="{{.UsedH}}" fill="{{$.ColorUsed}}"/>
<text x="{{.LabelX}}" y="248" text-anchor="middle">{{.Tenant}}</text></g>
{{end}}</svg>

<h2>GPUs over time: allocated and used against quota</h2>
<div class="legend"><span><i style="background:{{.ColorAlloc}}"></i>allocated</span><span><i style="background:{{.ColorUsed}}"></i>used</span><span><i style="background:{{.ColorQt}}"></i>quota</span></div>
<div class="grid">
{{range .Lines}}<div class="tenant"><h3>{{.Tenant}}</h3>
<svg class="lines" width="420" height="170" viewBox="0 0 420 170" role="img" aria-label="{{.Tenant}} GPUs over time">
<line x1="50" y1="140" x2="410" y2="140" stroke="#9ca3af"/><line x1="50" y1="10" x2="50" y2="140" stroke="#9ca3af"/>
<text x="44" y="16" text-anchor="end">{{.Max}}</text><text x="44" y="140" text-anchor="end">0</text>
<text x="50" y="158">{{$.StartLabel}}</text><text x="410" y="158" text-anchor="end">{{$.EndLabel}}</text>
<polyline points="{{.Quota}}" fill="none" stroke="{{$.ColorQt}}" stroke-width="3"/>
<polyline points="{{.Allocated}}" fill="none" stroke="{{$.ColorAlloc}}" stroke-width="2.5"/>
<polyline points="{{.Used}}" fill="none" stroke="{{$.ColorUsed}}" stroke-width="2.5"/>
</svg></div>
{{end}}</div>

<h2>Per tenant and pool</h2>
<table>
<tr><th>tenant</th><th>pool</th><th>allocated GPU-h</th><th>used GPU-h</th><th>utilization</th><th>quota GPU-h</th><th>idle quota GPU-h</th><th>price / GPU-h</th><th>cost {{.Currency}}</th></tr>
{{range .Rows}}<tr><td>{{.Tenant}}</td><td>{{.Pool}}</td><td>{{hours .Allocated}}</td><td>{{hours .Used}}</td><td>{{util .}}</td><td>{{hours .Quota}}</td><td>{{hours .Idle}}</td><td>{{.Price}}</td><td>{{money .Cost}}</td></tr>
{{end}}</table>
</body>
</html>
`
