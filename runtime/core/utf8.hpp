// UTF-8 as it arrives from outside (LLM replies, files): checked, and repaired where it is broken instead of
// losing the whole text for one bad byte. Every JSON text kevolve writes goes through json::quote, which uses
// this, so a line of the journal or of --json output is valid JSON whatever bytes it carries.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kevolve::utf8 {

// The length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when the bytes there are not one
// (a stray continuation byte, an overlong form, a surrogate, a code point above U+10FFFF, a cut sequence).
size_t sequence_length(std::string_view s, size_t i);

bool valid(std::string_view s);

// `s` with every byte that does not start a valid sequence replaced by U+FFFD (one per byte, as the
// WHATWG decoder does for such bytes); `replaced` (when given) receives how many bytes were replaced.
std::string repair(std::string_view s, size_t* replaced = nullptr);

// A JSON text whose \u escapes name lone UTF-16 surrogates (a \uD800 without its low half, or a low half alone)
// with each of those escapes replaced by \uFFFD; a backslash-escaped backslash is not an escape. Returns how many
// were replaced.
size_t repair_json_surrogates(std::string& json);

// `s` as base64 (RFC 4648, with padding): bytes that are not text, written into JSON.
std::string base64(std::string_view s);

}  // namespace kevolve::utf8
