#include "base/args.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace nvhcq {
namespace {

ArgParser make_parser() {
  ArgParser p("nvhcq run", "generate text");
  p.option("model", "FILE", "model file", "", 'm')
      .option("n-predict", "N", "tokens to generate", "32", 'n')
      .option("temp", "T", "temperature", "0.8")
      .flag("verbose", "say more", 'v')
      .positional("PROMPT", "text", false);
  return p;
}

TEST(Args, ParsesOptionsFlagsAndPositionals) {
  auto r = make_parser().parse({"-m", "a.gguf", "--temp=0.5", "-v", "hello"});
  EXPECT_EQ(r.get("model"), "a.gguf");
  EXPECT_DOUBLE_EQ(r.get_double("temp"), 0.5);
  EXPECT_EQ(r.get_int("n-predict"), 32) << "default applies when absent";
  EXPECT_TRUE(r.flag("verbose"));
  EXPECT_EQ(r.positional("PROMPT").value(), "hello");
}

TEST(Args, NegativeNumbersAndDashAreValues) {
  auto r = make_parser().parse({"--n-predict", "-1", "-"});
  EXPECT_EQ(r.get_int("n-predict"), -1);
  EXPECT_EQ(r.positional("PROMPT").value(), "-");
}

TEST(Args, UnknownOptionIsUsageErrorNamingIt) {
  try {
    make_parser().parse({"--bogus"});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--bogus"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("usage:"), std::string::npos);
  }
}

TEST(Args, MissingValueAndExtraArgumentsAreUsageErrors) {
  EXPECT_THROW(make_parser().parse({"--model"}), UsageError);
  EXPECT_THROW(make_parser().parse({"a", "b"}), UsageError);
  EXPECT_THROW(make_parser().parse({"--verbose=1"}), UsageError);
  EXPECT_THROW(make_parser().parse({"--n-predict", "x"}).get_int("n-predict"), UsageError);
}

TEST(Args, RequiredPositionalMissingUnlessHelp) {
  ArgParser p("nvhcq quantize", "convert");
  p.positional("IN", "input").positional("OUT", "output");
  EXPECT_THROW(p.parse({"in.gguf"}), UsageError);
  EXPECT_TRUE(p.parse({"--help"}).help_requested());
  EXPECT_NE(p.usage().find("IN"), std::string::npos);
}

}  // namespace
}  // namespace nvhcq
