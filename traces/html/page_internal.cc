#include "traces/html/page_internal.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/wall_limit.h"
#include "traces/html/svg_internal.h"

namespace hetsim::traces::html {
namespace {

constexpr const char* kStyle = R"css(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:16px 24px;max-width:1560px}
h1{font-size:22px;margin:0 0 2px}h2{font-size:17px;margin:22px 0 6px}.sub{color:#555;margin:0 0 12px}
.figures{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.fig{border:1px solid #ccc;border-radius:6px;padding:6px 12px;min-width:110px}
.fig .v{font-size:20px;font-weight:600}.fig .l{color:#555;font-size:12px}.fig.alert{border-color:#D55E00;background:#fbeee6}
.fig.alert .v{color:#D55E00}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f3f3f3;position:sticky;top:0}td{white-space:nowrap}td.long{max-width:32em;overflow:hidden;text-overflow:ellipsis;text-align:left}td:first-child,th:first-child{text-align:left}
table.sortable th{cursor:pointer}table.sortable th:after{content:" \2195";color:#999}
svg{font:11px system-ui,sans-serif}svg .title{font-size:13px;font-weight:600}svg .axis{font-size:12px}
svg .tick{fill:#444}svg .grid{stroke:#e4e4e4}svg .frame{fill:none;stroke:#888}
svg .series{fill:none;stroke-width:1.8}svg .identity{stroke:#666;stroke-dasharray:4 4}svg .errorbar{stroke-width:1.5}
.multiples{display:flex;flex-wrap:wrap;gap:6px}
#gantt{border:1px solid #ccc;cursor:grab;user-select:none;display:block}#gantt .lbl{fill:#fff;font-size:10px;pointer-events:none}
#gantt .lbl.dark{fill:#000}#gantt .row{fill:#fafafa}#gantt .rowname{font-size:12px}#gantt .lane{fill:#666;font-size:10px}
#gantt .fault{stroke:#000;stroke-width:1.5;stroke-dasharray:6 3}#gantt rect.b:hover{stroke:#000;stroke-width:1}
.hint{color:#555;font-size:12px}.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid #0003}
)css";

// Zoom and pan of the schedule (wheel zooms around the pointer, drag pans, double click resets),
// with the time axis redrawn and block labels shown where they fit; click-to-sort tables.
constexpr const char* kScript = R"js(
(function(){
const g=document.getElementById('gantt');
if(g){
  const L=+g.dataset.left,W=+g.dataset.width,T=+g.dataset.end,axisY=+g.dataset.axis;
  const blocks=[...g.querySelectorAll('[data-t]')].map(e=>{const t=e.dataset.t.split(' ').map(Number);return{e,a:t[0],b:t[1]}});
  const axis=g.querySelector('#gaxis');let v0=0,v1=T;
  const X=t=>L+(t-v0)/(v1-v0)*W;
  function ticks(){const r=(v1-v0)/8,p=Math.pow(10,Math.floor(Math.log10(r)));let s=p;for(const m of[1,2,5,10]){s=m*p;if(s>=r)break;}
    const out=[];for(let t=Math.ceil(v0/s)*s;t<=v1+1e-9;t+=s)out.push(t);return out;}
  function draw(){
    for(const k of blocks){const x0=Math.max(X(k.a),L-2),x1=Math.min(X(k.b),L+W+2),e=k.e;
      if(e.tagName==='text'){const w=x1-x0;e.setAttribute('x',((x0+x1)/2).toFixed(1));
        e.style.display=(x1>x0&&w>e.textContent.length*6+4)?'':'none';}
      else if(e.tagName==='line'){const x=X(k.a).toFixed(1);e.setAttribute('x1',x);e.setAttribute('x2',x);e.style.display=(k.a>=v0&&k.a<=v1)?'':'none';}
      else{e.setAttribute('x',x0.toFixed(1));e.setAttribute('width',Math.max(x1-x0,0).toFixed(1));}}
    let h='';for(const t of ticks()){const x=X(t).toFixed(1);
      h+=`<line x1="${x}" x2="${x}" y1="${axisY}" y2="${axisY+5}" stroke="#444"/><text class="tick" x="${x}" y="${axisY+17}" text-anchor="middle">${+t.toPrecision(6)}</text>`;}
    axis.innerHTML=h;}
  function tx(ev){const r=g.getBoundingClientRect();return (ev.clientX-r.left)*g.viewBox.baseVal.width/r.width;}
  g.addEventListener('wheel',ev=>{ev.preventDefault();const x=Math.min(Math.max(tx(ev),L),L+W),t=v0+(x-L)/W*(v1-v0);
    const k=Math.exp(ev.deltaY*0.0015),span=Math.min(T,Math.max((v1-v0)*k,T*1e-5));
    v0=t-(x-L)/W*span;v1=v0+span;if(v0<0){v1-=v0;v0=0;}if(v1>T){v0-=v1-T;v1=T;}draw();},{passive:false});
  let drag=null;g.addEventListener('mousedown',ev=>{drag={x:tx(ev),a:v0,b:v1};g.style.cursor='grabbing';});
  window.addEventListener('mouseup',()=>{drag=null;g.style.cursor='';});
  window.addEventListener('mousemove',ev=>{if(!drag)return;const d=(tx(ev)-drag.x)/W*(drag.b-drag.a);
    let a=drag.a-d,b=drag.b-d;if(a<0){b-=a;a=0;}if(b>T){a-=b-T;b=T;}v0=a;v1=b;draw();});
  g.addEventListener('dblclick',()=>{v0=0;v1=T;draw();});
  draw();
}
for(const t of document.querySelectorAll('table.sortable')){
  t.querySelectorAll('th').forEach((th,i)=>th.addEventListener('click',()=>{
    const body=t.tBodies[0],rows=[...body.rows],up=th.dataset.dir!=='up';th.dataset.dir=up?'up':'down';
    const key=r=>{const s=r.cells[i].textContent,n=parseFloat(s.replace(/,/g,''));return isNaN(n)?s:n;};
    rows.sort((a,b)=>{const x=key(a),y=key(b);const c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));return up?c:-c;});
    for(const r of rows)body.appendChild(r);}));
}
})();
)js";

}  // namespace

Page::Page(std::string title, std::string subtitle) : title_(std::move(title)) {
  absl::StrAppend(&body_, "<h1>", HtmlEscape(title_), "</h1>\n<p class=\"sub\">", HtmlEscape(subtitle), "</p>\n");
}

void Page::AddFigures(const std::vector<Figure>& figures) {
  body_ += "<div class=\"figures\">";
  for (const Figure& f : figures) {
    absl::StrAppend(&body_, "<div class=\"fig", f.alert ? " alert" : "", "\"><div class=\"v\">", HtmlEscape(f.value),
                    "</div><div class=\"l\">", HtmlEscape(f.label), "</div></div>");
  }
  body_ += "</div>\n";
}

void Page::AddHeading(const std::string& text) { absl::StrAppend(&body_, "<h2>", HtmlEscape(text), "</h2>\n"); }
void Page::AddParagraph(const std::string& text) {
  absl::StrAppend(&body_, "<p class=\"hint\">", HtmlEscape(text), "</p>\n");
}
void Page::AddRaw(const std::string& html) { absl::StrAppend(&body_, html, "\n"); }
void Page::AddTable(const Table& table) { absl::StrAppend(&body_, TableHtml(table), "\n"); }

constexpr size_t kLongCell = 40;

std::string TableHtml(const Table& table) {
  std::string out = absl::StrCat("<table", table.id.empty() ? "" : absl::StrCat(" id=\"", table.id, "\""),
                                 table.sortable ? " class=\"sortable\"" : "", "><thead><tr>");
  for (const std::string& h : table.header) absl::StrAppend(&out, "<th>", HtmlEscape(h), "</th>");
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    if (WallLimitPassed()) break;  // the page is dropped: the command checks its limit after drawing
    out += "<tr>";
    for (const std::string& cell : row) {
      // Rows stay one line high: a long cell (a refusal's message) is cut by the style sheet and
      // shown whole on hover.
      if (cell.size() > kLongCell) {
        absl::StrAppend(&out, "<td class=\"long\" title=\"", HtmlEscape(cell), "\">", HtmlEscape(cell), "</td>");
      } else {
        absl::StrAppend(&out, "<td>", HtmlEscape(cell), "</td>");
      }
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>";
  return out;
}

std::string Page::Finish() const {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", HtmlEscape(title_),
                      "</title>\n<meta name=\"viewport\" content=\"width=device-width\">\n<style>", kStyle,
                      "</style></head>\n<body>\n", body_, "<script>", kScript, "</script>\n</body></html>\n");
}

}  // namespace hetsim::traces::html
