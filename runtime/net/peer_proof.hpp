// The proofs of the cluster's mutual handshake: HMAC-SHA256 with a role's key over both sides' nonces, the
// role, which side speaks and the TLS channel binding. Pure functions (OpenSSL inside); no sockets.
//
//   peer proof = hex HMAC(key, "kevolve-cluster-2|peer|<role>|<node nonce>|<peer nonce>|<binding hex>")
//   node proof = the same with "node": the node shows it holds the role's key too.
// Both nonces are in both proofs, so neither side can replay the other's proof or an old one, and with TLS
// the binding (keying material exported from this TLS session) makes a proof worthless on any other
// connection, relayed or not.
#pragma once
#include <string>

namespace kevolve::net {

// 16 random bytes from the system's CSPRNG, as 32 hex digits.
std::string make_nonce();

std::string proof(const std::string& key, const char* side, const std::string& role, const std::string& node_nonce,
                  const std::string& peer_nonce, const std::string& binding);

// Whether `mac` equals the proof (constant-time comparison).
bool proof_ok(const std::string& mac, const std::string& key, const char* side, const std::string& role,
              const std::string& node_nonce, const std::string& peer_nonce, const std::string& binding);

// Bytes as lowercase hex.
std::string to_hex(const std::string& bytes);

}  // namespace kevolve::net

namespace kevolve::net {

// A role's key from the environment variable `var`: an error that names the variable when it is unset or
// shorter than 16 characters.
struct KeyResult {
  std::string key, error;
};
KeyResult key_from_env(const std::string& var);

}  // namespace kevolve::net

namespace kevolve::net {

// hex(HMAC-SHA256(key, message)).
std::string hmac_hex(const std::string& key, const std::string& message);

}  // namespace kevolve::net

namespace kevolve::net {

// Evaluator keys are per machine: the node holds the cluster's evaluator key and derives each host's key
// from it; an evaluator machine holds only its own host's key, so what it holds cannot speak for another
// host. host_key = hex HMAC(evaluator key, "kevolve-host-key|" + host).
std::string host_key(const std::string& evaluator_key, const std::string& host);

// A host name as a key may name it: 1-253 characters of letters, digits, '.', '-', '_'.
bool valid_host_name(const std::string& host);

// What an evaluator proves with: "host:NAME:KEY" (a host key, as `kevolve evaluator-key NAME` prints it) is
// NAME's key; any other value is the cluster's evaluator key itself, from which `default_host`'s key is
// derived here.
struct EvaluatorCredential {
  std::string host, key, error;
};
EvaluatorCredential evaluator_credential(const std::string& value, const std::string& default_host);

}  // namespace kevolve::net
