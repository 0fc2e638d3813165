// One self-contained HTML page: inline CSS and a small hand-written script (zoom and pan of the
// schedule, sortable tables), no network access, no external library. Sections are appended in
// order; Finish() returns the page. Same sections in, same bytes out.
#ifndef HETSIM_TRACES_HTML_PAGE_INTERNAL_H_
#define HETSIM_TRACES_HTML_PAGE_INTERNAL_H_

#include <string>
#include <utility>
#include <vector>

namespace hetsim::traces::html {

struct Figure {
  std::string label;   // "iteration time"
  std::string value;   // "2,934.1 ms"
  bool alert = false;  // drawn in the warning colour (OOM, failure)
};

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // cells as text (escaped when written)
  bool sortable = false;                       // click a header to sort by its column
  std::string id;
};

class Page {
 public:
  Page(std::string title, std::string subtitle);
  void AddFigures(const std::vector<Figure>& figures);
  void AddHeading(const std::string& text);
  void AddParagraph(const std::string& text);  // plain text, escaped
  void AddRaw(const std::string& html);        // already HTML (an SVG)
  void AddTable(const Table& table);
  std::string Finish() const;

 private:
  std::string title_, body_;
};

std::string TableHtml(const Table& table);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_PAGE_INTERNAL_H_
