// Our contracts of ONNX's ops against ONNX's own schemas (libonnx, which the library cannot link:
// its portable build has a static protobuf): formals, attributes with their types, required flags
// and defaults, and dtypes that ONNX allows.

#include <onnx/defs/schema.h>

#include <climits>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "zerograph/core/str_cat.h"
#include "zerograph/ir/op_contract.h"

namespace zerograph {
namespace {

// The ONNX schema domain of a contract's domain.
std::string SchemaDomain(std::string_view domain) {
  return domain.empty() ? std::string(ONNX_NAMESPACE::ONNX_DOMAIN) : std::string(domain);
}

// The newest opset version this libonnx knows of `domain`.
int NewestOpset(std::string_view domain) {
  const auto& ranges = ONNX_NAMESPACE::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto range = ranges.find(SchemaDomain(domain));
  return range == ranges.end() ? 0 : range->second.second;
}

// The last opset version `contract` covers: the next version of its op starts after it.
int LastVersion(const OpContract& contract) {
  int last = INT_MAX;
  for (const OpContract* other : OpContracts::Get().All()) {
    if (other->domain == contract.domain && other->name == contract.name &&
        other->since_version > contract.since_version) {
      last = std::min(last, other->since_version - 1);
    }
  }
  return last;
}

OpFormal::Arity ArityOf(const ONNX_NAMESPACE::OpSchema::FormalParameter& formal) {
  switch (formal.GetOption()) {
    case ONNX_NAMESPACE::OpSchema::Single:
      return OpFormal::Arity::kSingle;
    case ONNX_NAMESPACE::OpSchema::Optional:
      return OpFormal::Arity::kOptional;
    case ONNX_NAMESPACE::OpSchema::Variadic:
      return formal.GetMinArity() == 0 ? OpFormal::Arity::kVariadicOrNone
                                       : OpFormal::Arity::kVariadic;
  }
  return OpFormal::Arity::kSingle;
}

// The type strings ONNX allows for `formal` ("T" names a constraint; "tensor(int64)" is itself).
std::set<std::string> AllowedTypes(const ONNX_NAMESPACE::OpSchema& schema,
                                   const ONNX_NAMESPACE::OpSchema::FormalParameter& formal) {
  for (const auto& constraint : schema.typeConstraintParams()) {
    if (constraint.type_param_str == formal.GetTypeStr()) {
      return {constraint.allowed_type_strs.begin(), constraint.allowed_type_strs.end()};
    }
  }
  return {formal.GetTypeStr()};
}

void ExpectFormalsAgree(const OpContract& contract, const std::vector<OpFormal>& ours,
                        const ONNX_NAMESPACE::OpSchema& schema,
                        const std::vector<ONNX_NAMESPACE::OpSchema::FormalParameter>& theirs,
                        std::string_view what) {
  const std::string label = StrCat(contract.ToString(), " ", what);
  ASSERT_EQ(ours.size(), theirs.size()) << label;
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].arity, ArityOf(theirs[i]))
        << label << " " << i << " (" << ours[i].name << ")";
    const TypeConstraint* constraint = contract.FindConstraint(ours[i].type);
    if (constraint == nullptr) continue;  // any dtype
    const std::set<std::string> allowed = AllowedTypes(schema, theirs[i]);
    for (DataType dtype : constraint->allowed) {
      EXPECT_TRUE(allowed.contains(StrCat("tensor(", DataTypeName(dtype), ")")))
          << label << " " << i << " (" << ours[i].name << ") allows " << DataTypeName(dtype)
          << ", which ONNX does not";
    }
  }
}

void ExpectDefaultAgrees(const OpContract& contract, const OpAttribute& ours,
                         const ONNX_NAMESPACE::AttributeProto& theirs) {
  const std::string label = StrCat(contract.ToString(), " attribute ", ours.name);
  if (!theirs.has_name() || theirs.name().empty()) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(ours.default_value))
        << label << ": ONNX has no default";
    return;
  }
  if (const int64_t* i = std::get_if<int64_t>(&ours.default_value)) {
    EXPECT_EQ(*i, theirs.i()) << label;
  } else if (const float* f = std::get_if<float>(&ours.default_value)) {
    EXPECT_EQ(*f, theirs.f()) << label;
  } else if (const std::string_view* s = std::get_if<std::string_view>(&ours.default_value)) {
    EXPECT_EQ(*s, theirs.s()) << label;
  } else {
    ADD_FAILURE() << label << ": ONNX has a default, ours has none";
  }
}

// Every contract of an ONNX domain matches the newest ONNX schema in the versions it covers.
TEST(OnnxSchemaAgreementTest, StandardContractsMatchOnnxSchemas) {
  int checked = 0;
  for (const OpContract* contract : OpContracts::Get().All()) {
    if (!contract->domain.empty() && contract->domain != kTrainingDomain) continue;
    const ONNX_NAMESPACE::OpSchema* schema = ONNX_NAMESPACE::OpSchemaRegistry::Schema(
        std::string(contract->name), LastVersion(*contract), SchemaDomain(contract->domain));
    if (schema == nullptr) {
      // Only an op newer than this libonnx's opsets (Gelu-20 with ONNX 1.12) may be unknown.
      EXPECT_GT(contract->since_version, NewestOpset(contract->domain))
          << contract->ToString() << " has no ONNX schema";
      continue;
    }
    if (schema->SinceVersion() < contract->since_version) {
      // This libonnx predates the version (ReduceMean-18 with ONNX 1.12): nothing to compare.
      continue;
    }
    ++checked;
    ExpectFormalsAgree(*contract, contract->inputs, *schema, schema->inputs(), "input");
    ExpectFormalsAgree(*contract, contract->outputs, *schema, schema->outputs(), "output");
    std::set<std::string> names;
    for (const auto& [name, attribute] : schema->attributes()) {
      names.insert(name);
      const OpAttribute* ours = contract->FindAttribute(name);
      if (ours == nullptr) {
        ADD_FAILURE() << contract->ToString() << " lacks ONNX's attribute " << name;
        continue;
      }
      EXPECT_EQ(static_cast<int>(ours->type), static_cast<int>(attribute.type))
          << contract->ToString() << " attribute " << name;
      EXPECT_EQ(ours->required, attribute.required) << contract->ToString() << " " << name;
      ExpectDefaultAgrees(*contract, *ours, attribute.default_value);
    }
    for (const OpAttribute& attribute : contract->attributes) {
      EXPECT_TRUE(names.contains(std::string(attribute.name)))
          << contract->ToString() << " declares " << attribute.name << ", which ONNX does not";
    }
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace zerograph
