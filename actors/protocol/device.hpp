// The device interface (the device registry and each device actor speak it alike):
//   spec : register a problem's spec (encoded with runtime/records/records_codec) under its name
//   eval : evaluate a built candidate; replies with the verdict
#pragma once
#include "actors/protocol/type_ids.hpp"

namespace kevolve {

using device_actor = caf::typed_actor<caf::reacts_to<atoms::spec_atom, std::string, std::string>,
                                      caf::replies_to<atoms::eval_atom, EvalJob>::with<EvalResult>>;

}  // namespace kevolve
