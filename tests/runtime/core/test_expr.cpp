#include <catch2/catch.hpp>

#include "runtime/core/expr.hpp"

using kevolve::eval_expr;
using kevolve::symbols_of;

TEST_CASE("roofline and shape expressions evaluate over symbols", "[expr]") {
  std::string err;
  const std::map<std::string, int64_t> s{{"T", 4096}, {"H", 1024}, {"F", 7}};
  CHECK(*eval_expr("4*T*H*2 + 4*H", s, err) == 4.0 * 4096 * 1024 * 2 + 4 * 1024);
  CHECK(*eval_expr("F+1", s, err) == 8);
  CHECK(*eval_expr("(T - H) / 2", s, err) == 1536);
  CHECK(*eval_expr("-F * 2", s, err) == -14);
}

TEST_CASE("bad expressions name the problem", "[expr]") {
  std::string err;
  CHECK_FALSE(eval_expr("4*X", {{"T", 1}}, err));
  CHECK(err.find("unknown symbol 'X'") != std::string::npos);
  CHECK_FALSE(eval_expr("(1+2", {}, err));
  CHECK(err.find("')'") != std::string::npos);
  CHECK_FALSE(eval_expr("1/0", {}, err));
  CHECK_FALSE(eval_expr("2 3", {}, err));
}

TEST_CASE("launch expressions: cdiv rounds up, min and max", "[expr]") {
  std::string err;
  const std::map<std::string, int64_t> s{{"T", 1000}, {"SMS", 132}};
  CHECK(*eval_expr("cdiv(T, 8)", s, err) == 125);
  CHECK(*eval_expr("cdiv(T + 1, 8)", s, err) == 126);
  CHECK(*eval_expr("min(cdiv(T, 4), SMS * 4)", s, err) == 250);
  CHECK(*eval_expr("max(T, SMS) * 2", s, err) == 2000);
  CHECK_FALSE(eval_expr("cdiv(T)", s, err));
  CHECK(err.find("two arguments") != std::string::npos);
  CHECK_FALSE(eval_expr("floor(T, 2)", s, err));
  CHECK(err.find("unknown function 'floor'") != std::string::npos);
}

TEST_CASE("an expression's symbols are its names, not its functions or the letters of its numbers", "[expr]") {
  CHECK(symbols_of("threads * bps <= 2048") == std::set<std::string>{"threads", "bps"});
  CHECK(symbols_of("min(T, SMS * 4) + cdiv (H, 2e3) - x_1") == std::set<std::string>{"T", "SMS", "H", "x_1"});
  CHECK(symbols_of("1.5e3 * 2").empty());
}
