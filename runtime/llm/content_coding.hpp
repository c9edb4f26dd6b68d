// HTTP content codings of a reply body: a proxy or server may gzip or deflate a reply whatever the client
// asked. zlib stays inside content_coding.cpp.
#pragma once
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::llm {

// `body` decoded from its Content-Encoding ("" or identity: as it is; gzip, x-gzip, deflate — zlib-wrapped
// or raw — and a list of them, e.g. "gzip, identity", undone in reverse order). The decoded body may not exceed
// `limit` bytes. Errors: invalid_argument (a coding kevolve cannot read: br, zstd, ...; it names it), corrupt (the
// bytes do not decode, or decode past `limit`).
Expected<std::string> decode_content(const std::string& encoding, std::string body, size_t limit);

}  // namespace kevolve::llm
