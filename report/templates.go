package report

// pageHTML is the scenario page. The script only adds hover details and
// partition toggles; everything is readable without it.
const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;max-width:1160px}
h1{font-size:20px;margin:0 0 4px} .meta{color:#5b6570;margin-bottom:14px}
.verdict{padding:12px 14px;border-radius:6px;margin:12px 0 18px}
.pass{background:#e7f6ec;border:1px solid #9bd3ae} .fail{background:#fdeaea;border:1px solid #e79a9a}
.info{background:#e8f1fb;border:1px solid #9cc0e6} .nonstrict{background:#fff4d6;border:1px solid #e3c16f}
.inconclusive{background:#eeeaf6;border:1px solid #b3a6d3} .error{background:#f1f3f5;border:1px solid #adb5bd}
.fail b{color:#b3261e} .paragraph{margin-top:6px} .rule{margin:4px 0 10px} .refs{color:#5b6570;font-size:12px}
h2{font-size:16px;margin:22px 0 4px} .counts{color:#5b6570;font-size:12px;margin-bottom:4px}
svg{background:#fff;border:1px solid #d8dde2;border-radius:4px}
.axis{stroke:#9aa4ae;stroke-width:1} .grid{stroke:#eef0f2} .tl{font-size:11px;fill:#5b6570}
.fw{fill:#f3d9a4;opacity:.55} .fwl{font-size:11px;fill:#8a5a00}
.ack{fill:#9ec5e8} .seq{fill:#1f5f99} .retry{fill:none;stroke:#e08a00;stroke-width:1.5}
.err{fill:#d33;} .reset{fill:#b3261e;stroke:#000;stroke-width:1}
.vline{stroke:#b3261e;stroke-width:2;stroke-dasharray:4 3} .vdot{fill:none;stroke:#b3261e;stroke-width:3}
.legend span{display:inline-block;margin-right:14px;font-size:12px} .sw{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;font-size:12px} td,th{border:1px solid #d8dde2;padding:3px 8px;text-align:left}
#detail{position:fixed;right:16px;bottom:16px;max-width:460px;background:#1d232a;color:#fff;padding:8px 10px;border-radius:6px;font-size:12px;display:none}
</style>
<script>window.addEventListener('error', function(e){ document.documentElement.setAttribute('data-script-error', String(e.message)); });</script>
</head><body>
<h1>{{.Title}}</h1>
<div class="meta">run {{.Run.RunID}}{{if .Run.Seconds}} · {{printf "%.0f" .Run.Seconds}} s{{end}}{{if .Run.KnownBad}} · known-bad client: {{if .Run.OK}}failed as expected{{else}}NOT the expected failure{{end}}{{end}} · generated {{.Generated}}</div>
<div class="verdict {{.Class}}" id="verdict" data-grade="{{.Verdict.Grade}}"><b>{{.Verdict.Grade}}{{with .First}} · <a href="#check-{{.Check}}">{{.Check}}</a>{{end}}</b><div class="paragraph" id="violation">{{.Verdict.Paragraph}}</div>
{{range .Verdict.Effects}}<div class="refs">fault effect {{if .Shown}}shown{{else}}NOT shown{{end}}: {{.Requirement}} ({{.Evidence}})</div>{{end}}</div>
<div class="legend">
<span><i class="sw" style="background:#1f5f99"></i>base sequence sent</span>
<span><i class="sw" style="background:#9ec5e8"></i>record counter acknowledged</span>
<span><i class="sw" style="border:2px solid #e08a00;width:7px;height:7px"></i>retry</span>
<span><i class="sw" style="background:#d33"></i>error</span>
<span><i class="sw" style="background:#b3261e;border:1px solid #000"></i>deviant send (a wire finding)</span>
<span><i class="sw" style="background:#f3d9a4"></i>fault window</span>
<span><label><input type="checkbox" id="showAcks" checked> acknowledgements</label></span>
</div>
{{range .Charts}}
<h2>partition {{.Partition}}</h2>
<div class="counts">{{.Requests}} batches sent · {{.Acked}} records acknowledged · {{.Errors}} errors · {{.Retries}} retries · {{.Resets}} deviant sends</div>
<svg class="chart" width="1100" height="{{.Height}}" viewBox="0 0 1100 {{.Height}}" role="img" aria-label="partition {{.Partition}} timeline">
{{range .Windows}}<text class="fwl" x="{{.LabelX}}" y="{{.LabelY}}"><title>{{.Label}}</title>{{.Short}}</text>
{{end}}<g transform="translate(0 {{.Top}})">
{{range .Windows}}<rect class="fw" x="{{.X}}" y="26" width="{{.W}}" height="204"><title>{{.Label}}</title></rect>
{{end}}{{range .YTicks}}<line class="grid" x1="70" x2="1080" y1="{{.Pos}}" y2="{{.Pos}}"/><text class="tl" x="64" y="{{.Pos}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}{{range .XTicks}}<text class="tl" x="{{.Pos}}" y="248" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="axis" x1="70" x2="70" y1="26" y2="230"/><line class="axis" x1="70" x2="1080" y1="230" y2="230"/>
{{range .Points}}<circle class="{{.Class}}" cx="{{printf "%.1f" .X}}" cy="{{printf "%.1f" .Y}}" r="{{if eq .Class "ack" "seq"}}1.6{{else}}3.2{{end}}"><title>{{.Title}}</title></circle>
{{end}}{{with .Violation}}<line class="vline" x1="{{.X}}" x2="{{.X}}" y1="26" y2="230"/><circle class="vdot" id="first-violation" cx="{{.X}}" cy="{{.Y}}" r="9"><title>{{.Title}}</title></circle>{{end}}
</g>
</svg>
{{end}}
{{if .Faults}}<h2>fault steps</h2><table><tr><th>at</th><th>step</th><th>target</th><th>detail</th></tr>
{{range .Faults}}<tr><td>{{since $.Start .Time}}</td><td>{{.Action}}</td><td>{{.Target}}</td><td>{{.Detail}}</td></tr>
{{end}}</table>{{end}}
{{if .Verdict.Violations}}<h2>findings ({{len .Verdict.Violations}})</h2><table><tr><th>grade</th><th>check</th><th>source</th><th>summary</th><th>broker answers</th><th>in the log</th></tr>
{{range .Verdict.Violations}}<tr><td>{{.Grade}}</td><td><a href="#check-{{.Check}}">{{.Check}}</a></td><td>{{.Source}}</td><td>{{.Summary}}</td><td>{{range $i, $a := .Answers}}{{if $i}}, {{end}}{{$a}}{{end}}</td><td>{{with .InLog}}{{if .}}yes{{else}}no{{end}}{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Rules}}<h2>requirements</h2>
{{range .Rules}}<div class="rule" id="check-{{.ID}}"><b>{{.ID}}</b>: {{.Requirement}} <i>{{.Grading}}</i><div class="refs">{{range .References}}{{.}}<br>{{end}}</div></div>
{{end}}{{end}}
<div id="detail"></div>
<script>
(function(){
  var detail = document.getElementById('detail');
  document.querySelectorAll('svg.chart circle, svg.chart rect, svg.chart text.fwl').forEach(function(el){
    el.addEventListener('mouseenter', function(){
      var t = el.querySelector('title'); if(!t) return;
      detail.textContent = t.textContent; detail.style.display = 'block';
    });
    el.addEventListener('mouseleave', function(){ detail.style.display = 'none'; });
  });
  document.getElementById('showAcks').addEventListener('change', function(e){
    document.querySelectorAll('circle.ack').forEach(function(c){ c.style.display = e.target.checked ? '' : 'none'; });
  });
  // Fault labels that overlap as drawn, counted for the browser test.
  var overlaps = 0;
  document.querySelectorAll('svg.chart').forEach(function(svg){
    var boxes = Array.prototype.map.call(svg.querySelectorAll('text.fwl'), function(t){ return t.getBBox(); });
    for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i], b = boxes[j];
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) overlaps++;
    }
  });
  document.body.setAttribute('data-label-overlaps', String(overlaps));
  document.body.setAttribute('data-ready', 'yes');
})();
</script>
</body></html>
`

// indexHTML is the page for a whole run or a merged matrix: one grid per
// Kafka version and mode, then every scenario run, linking to their pages.
const indexHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kconform results</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a}
table{border-collapse:collapse} td,th{border:1px solid #d8dde2;padding:4px 10px;text-align:left;vertical-align:top}
.pass{background:#e7f6ec} .fail{background:#fdeaea} .na{background:#f1f3f5;color:#5b6570} .expected{background:#f6e7d6}
.info{background:#e8f1fb} .nonstrict{background:#fff4d6} .inconclusive{background:#eeeaf6} .error{background:#e9ecef}
</style></head><body>
<h1>kconform results</h1>
<p>{{len .Cells}} scenario runs · {{.Unexpected}} not as expected · generated {{.Generated}}</p>
{{range .Blocks}}<h2>Kafka {{.Kafka}}</h2>
<table class="grid" data-kafka="{{.Kafka}}"><tr><th>scenario</th>{{range .Clients}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><th>{{.Scenario}}</th>{{range .Cells}}{{if .}}<td class="{{.Class}}" data-grade="{{.Grade}}"><a class="cell" href="{{.Page}}">{{.Text}}</a><br><small>{{.Rate}}{{if .RunLinks}} · runs{{range .RunLinks}} <a class="run" href="{{.Page}}">{{.N}}</a>{{end}}{{end}}</small></td>{{else}}<td class="na">-</td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}<h2>Every scenario run</h2>
<table><tr><th>Kafka</th><th>client</th><th>scenario</th><th>grade</th><th>time</th></tr>
{{range .Cells}}<tr class="{{.Class}}" data-grade="{{.Grade}}"><td>{{.KafkaMode}}</td><td>{{.Client}}</td><td>{{if .Page}}<a href="{{.Page}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Text}}</td><td>{{.Time}}</td></tr>
{{end}}</table>
</body></html>
`
