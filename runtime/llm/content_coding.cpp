#include "runtime/llm/content_coding.hpp"

#include <zlib.h>

#include <algorithm>
#include <vector>

namespace kevolve::llm {

namespace {

// Inflates `in` with zlib's window bits `bits` (15 + 32: a zlib or gzip header, detected; -15: raw deflate).
Expected<std::string> inflate_with(const std::string& in, int bits, size_t limit) {
  using R = Expected<std::string>;
  z_stream z{};
  if (inflateInit2(&z, bits) != Z_OK) return R::failure(Errc::failed, "zlib: cannot start inflating");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = z.msg ? z.msg : "the stream ends before its end";
      inflateEnd(&z);
      return R::failure(Errc::corrupt, why);
    }
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      return R::failure(Errc::corrupt, "it decodes to more than " + std::to_string(limit >> 20) + " MiB");
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {  // all input used, no end marker
      inflateEnd(&z);
      return R::failure(Errc::corrupt, "the compressed body is cut short");
    }
  }
  inflateEnd(&z);
  return out;
}

std::string trim_lower(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

}  // namespace

Expected<std::string> decode_content(const std::string& encoding, std::string body, size_t limit) {
  using R = Expected<std::string>;
  std::vector<std::string> codings;  // in the order they were applied
  for (size_t pos = 0; pos <= encoding.size();) {
    size_t comma = encoding.find(',', pos);
    if (comma == std::string::npos) comma = encoding.size();
    if (auto c = trim_lower(encoding.substr(pos, comma - pos)); !c.empty() && c != "identity") codings.push_back(c);
    pos = comma + 1;
  }
  for (auto it = codings.rbegin(); it != codings.rend(); ++it) {
    Expected<std::string> out = R::failure("");
    if (*it == "gzip" || *it == "x-gzip") {
      out = inflate_with(body, 15 + 32, limit);
    } else if (*it == "deflate") {  // RFC 9110 says zlib-wrapped; some servers send raw deflate
      out = inflate_with(body, 15 + 32, limit);
      if (!out) out = inflate_with(body, -15, limit);
    } else {
      return R::failure(Errc::invalid_argument, "the reply is compressed with '" + *it +
                                               "', which kevolve cannot read (it reads gzip and deflate)");
    }
    if (!out) return R::failure(Errc::corrupt, "the reply's " + *it + " body does not decode: " + out.error());
    body = std::move(*out);
  }
  return body;
}

}  // namespace kevolve::llm
