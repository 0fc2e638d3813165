// Text for HTML and SVG content and attribute values, for every page and chart hetsim writes.
#ifndef HETSIM_BASE_HTML_ESCAPE_H_
#define HETSIM_BASE_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace hetsim {

// & < > " ' as entities; everything else as is.
std::string HtmlEscape(absl::string_view s);

}  // namespace hetsim

#endif  // HETSIM_BASE_HTML_ESCAPE_H_
