// Text for HTML and SVG content and attribute values, for every page and chart hetsim writes.
#ifndef HETSIM_TRACES_HTML_HTML_ESCAPE_H_
#define HETSIM_TRACES_HTML_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace hetsim::traces::html {

// & < > " ' as entities; everything else as is.
std::string HtmlEscape(absl::string_view s);

}  // namespace hetsim::traces::html

#endif  // HETSIM_TRACES_HTML_HTML_ESCAPE_H_
