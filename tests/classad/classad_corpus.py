"""Expressions for the differential tests against HTCondor's library (classad2)."""

MY_AD = """[
    Memory = 2048; Cpus = 4; Name = "slot1@host"; Arch = "X86_64"; OpSys = "LINUX";
    LoadAvg = 0.25; HasGPU = false; Disk = 100000; KFlops = 1234567; List = { 1, 2, "three", 4.5 };
    Nested = [ a = 1; b = a + 1; c = "x"; d = Memory ]; Self = Self; Loop1 = Loop2; Loop2 = Loop1;
    Chain = Memory * 2; Str = "Hello World"; Zero = 0; Neg = -5; Undef = undefined; Err = error;
    Requirements = TARGET.RequestMemory <= Memory && TARGET.RequestCpus <= Cpus;
    Rank = TARGET.Prio * 1.5; Csv = "a, b,c ,d"; Mixed = "MiXeD"
]"""

TARGET_AD = """[
    RequestMemory = 1024; RequestCpus = 2; Owner = "alice"; Prio = 10; Cmd = "/bin/sleep";
    Memory = 512; OnlyTarget = 42; Requirements = TARGET.Memory >= RequestMemory;
    Ref = Owner; Args = "1 2 3"; T = true
]"""

LITERALS = [
    "1", "0", "-1", "42", "9223372036854775807", "-9223372036854775808", "1.0", "1.5e3", "1.5E-7",
    ".5", "0.0", "-0.0", "-2.5", "123456789.123", "1e16", "1e300", "1e400", "-1e400", "true", "false",
    "TRUE", "False", "undefined", "UNDEFINED", "error", "ERROR", '"abc"', '""', '"a\\tb\\n\\"q\\""',
    '"\\101\\102"', '"back\\\\slash"', '"\\a\\b\\f\\v\\r\\?\\\'"', '"ab" "cd"', '"unknown\\qesc"',
    "{}", "{1}", "{1, 2, 3}", '{1, "a", true, undefined, 2.5}', "{{1}, {2, 3}}", "[]", "[a = 1]",
    "(1)", "((2))",
]

ARITH = [
    "1+2*3", "(1+2)*3", "1 + 2 * 3 - 4 / 2", "7 / 2", "-7 / 2", "7 / -2", "-7 % 2", "7 % -2", "7 % 3",
    "1 / 0", "1.0 / 0", "1.0 / 0.0", "5 % 0", "5.5 % 2", "5.5 / 2", "1 + 1.5", "2 * 2.5", "10 - 0.5",
    "9223372036854775807 + 1", "-9223372036854775808 - 1", "-9223372036854775807 - 2",
    "-9223372036854775808 / -1", "-9223372036854775808 % -1", "3037000500 * 3037000500",
    "1e300 * 1e300", "1e308 * 10", 'real("INF") + 1', "true + 1", "true * 2.0", "false - 1",
    '"a" + 1', "1 + undefined", "undefined + error", "error + undefined", "undefined * 0",
    "- 7", "-(1)", "- -1", "--1", "+5", "-true", "-undefined", '-"a"', "3 - - 3", "2*-3",
    "10 % 3 * 2", "2 - 3 - 4", "2 - (3 - 4)", "100 / 10 / 5", "1.0 / 3", "2.0 / 3 * 3",
    "0.1 + 0.2", "1e16 + 1", "-(-9223372036854775807 - 1)",
]

BITS = [
    "5 & 3", "5 | 3", "5 ^ 3", "~5", "~0", "1 << 2", "1 << 70", "1 << 63", "-8 >> 1", "-8 >>> 1",
    "1 >>> 1", "256 >> 4", "true & 1", "1.5 & 1", "~true", "undefined & 1", "1 << 2 + 1",
    "5 & 3 | 8", "1 | 2 ^ 3 & 4", "-1 >>> 60",
]

COMPARE = [
    "1 < 2", "2 < 1", "1 <= 1", "1 > 2", "3 >= 2", "1 == 1", "1 == 1.0", "1 != 1.0", "1 != 2",
    '"abc" == "ABC"', '"abc" != "ABD"', '"a" < "B"', '"B" < "a"', '"abc" < "abd"', '"" < "a"',
    '"abc" =?= "ABC"', '"abc" =?= "abc"', '"abc" =!= "ABC"', "1 =?= 1.0", "true =?= 1",
    "undefined =?= undefined", "error =?= error", "undefined is error", "1 is 1", "1 isnt 2",
    "undefined == undefined", '"a" == undefined', "undefined == 1", "error == undefined",
    '"a" == 1', '5 < "a"', "1 < true", "true < false", "true == 1", "false == 0", "1 < 2 == true",
    "1 == 1 == 1", "undefined != 1", "undefined isnt 1", "2.5 >= 2", "-0.0 == 0.0",
    'real("NaN") == real("NaN")', 'real("INF") > 1e308', "1 < 2 < 3",
]

LOGIC = [
    "true && true", "true && false", "false && error", "error && false", "undefined && false",
    "false && undefined", "undefined && true", "true && undefined", "undefined && undefined",
    "undefined && error", "error && undefined", "true || error", "error || true", "undefined || true",
    "undefined || false", "false || undefined", "true || undefined", "false || false",
    "1 && true", "0 && true", "2.5 || false", '"a" && true', 'true && "a"', "true && 1",
    "undefined && 1", "!true", "!false", "!undefined", "!error", "!1", "!0.0", '!"a"', "!!true",
    "! !false", "true && false || true", "true || false && false", "(true || false) && false",
    "false || 0", "false || 3", "true && 0.0", "{1} && true", "false && {1}",
]

TERNARY = [
    "true ? 1 : 2", "false ? 1 : 2", "1 ? 2 : 3", "0 ? 2 : 3", "0.0 ? 1 : 2", '"x" ? 1 : 2',
    "undefined ? 1 : 2", "error ? 1 : 2", "true ? error : 1", "false ? error : 1",
    "true ? false ? 1 : 2 : 3", "false ? 1 : true ? 2 : 3", "(true ? 1 : 2) + 1",
    "true ? 1 : 2 + 10", "x ?: 3", "undefined ?: 1", "error ?: 1", "0 ?: 1", "false ?: 1",
    "x ?: y ?: 5", "true ?: 7",
]

REFS = [
    "Memory", "memory", "MEMORY", "MY.Memory", "my.Memory", "TARGET.Memory", "target.memory",
    "TARGET.RequestMemory", "RequestMemory", "OnlyTarget", "MY.OnlyTarget", "TARGET.Cpus",
    "Missing", "MY.Missing", "TARGET.Missing", "Chain", "Chain + 1", "Self", "Loop1", "Loop2",
    "Nested.a", "Nested.b", "Nested.c", "Nested.d", "Nested.missing", "Nested.A",
    "List[0]", "List[2]", "List[3]", "List[4]", "List[-1]", "List[1.5]", "List[undefined]",
    'Nested["a"]', 'Nested["B"]', "Str[0]", "Undef", "Err", "Undef + 1", "Err + 1",
    "TARGET.Ref", "TARGET.Requirements", "Requirements", "TARGET.T && MY.Cpus > 1",
    "TARGET.Memory >= 1024 && Cpus > 0", "RequestMemory <= Memory && RequestCpus <= Cpus",
    "Memory - TARGET.Memory", "[a = 1; b = a + 1].b", "[a = b; b = a].a", "[x = Memory].x",
    "{[a = 1], [a = 2]}.a", "{1, 2}.a", "{1,2}[1]", "{1,2}[5]",
    '[a=1]["A"]', "Missing.a", "Missing[0]", "Neg * Neg", "Zero ? 1 : 2", "x.y.z", "Nested.b * 10",
    "Rank", "TARGET.Prio", "(Memory)", "MY.Nested.a",
]

FUNCTIONS = [
    "isUndefined(x)", "isUndefined(1)", "isError(error)", "isError(1/0)", "isString(\"\")",
    "isString(1)", "isInteger(1)", "isInteger(1.0)", "isReal(1.0)", "isReal(1)", "isBoolean(true)",
    "isBoolean(1)", "isList({})", "isList(1)", "isClassAd([])", "isClassAd(Nested)", "isUndefined()",
    "int(3.7)", "int(-3.7)", "int(true)", 'int("12")', 'int("12abc")', 'int("abc")', 'int("-3")',
    'int("  4")', 'int("1e3")', "int(undefined)", "int(error)", "int(1e30)", "int(-1e30)",
    'int(real("NaN"))', "int({1})", "real(3)", 'real("1e3")', 'real("abc")', "real(true)",
    'real(" 2.5x")', 'real("INF")', 'real("-INF")', 'real("NaN")', "real(undefined)",
    "string(1.5)", "string(3)", "string(true)", "string(undefined)", "string(error)",
    'string("x")', "string({1,2})", 'bool("true")', 'bool("FALSE")', 'bool("abc")', 'bool("1")',
    "bool(0)", "bool(2.5)", "bool(undefined)", "floor(2.5)", "floor(-2.5)", "floor(3)",
    'floor("3.5")', "floor(undefined)", 'floor("x")', "ceiling(2.1)", "ceiling(-2.1)",
    "ceiling(4)", "round(2.5)", "round(-2.5)", "round(2.6)", "round(-0.5)", "round(3)",
    "round(3.5)", "round(1e30)", "pow(2,3)", "pow(2,-1)", "pow(2.0,3)", "pow(2,0.5)", "pow(0,0)",
    "pow(-2,2)", "pow(-2,3)", "pow(-8,3)", "pow(2,10)", "pow(10,18)", "pow(10,19)", "pow(2,64)", "pow(undefined,1)",
    "pow(1)", "pow(2.0,-1)", "max({1, 2})", "min({3, 1})", "max({1, 2.5})", "min({})",
    'max({1, "a"})', "max(1, 2)", 'strcat("a", 1, 2.5)', 'strcat("a", "b", "c")', "strcat()",
    "strcat(undefined, \"a\")", "strcat(true)", "strcat(error)", 'substr("hello", 1, 2)',
    'substr("hello", -2)', 'substr("hello", 1)', 'substr("hello", 10)', 'substr("hello", 1, -1)',
    'substr("hello", 0, 100)', 'substr("hello", -10, 2)', "substr(1, 1)", 'substr("abc", 1.0)',
    'size("abc")', 'size("")', "size({1,2})", "size({})", "size(undefined)", "size(3)", "size(Nested)",
    'toUpper("abc")', 'toLower("AbC")', "toLower(5)", "toUpper(undefined)", 'toUpper("MiXeD")',
    'strcmp("a", "B")', 'strcmp("a", "a")', 'strcmp("b", "a")', 'stricmp("a", "A")',
    'stricmp("a", "B")', "strcmp(1, \"1\")", "strcmp(undefined, \"a\")", "member(1, {1, 2})",
    "member(3, {1, 2})", 'member("A", {"a", "b"})', "member(1, 1)", "member(undefined, {1})",
    "member(1.0, {1, 2})", "ifThenElse(true, 1, 2)", "ifThenElse(false, 1, 2)",
    "ifThenElse(undefined, 1, 2)", "ifThenElse(1, 2, 3)", 'ifThenElse("a", 1, 2)',
    "ifThenElse(true, 1)", "ifThenElse(true, 1, error)", 'regexp("a.c", "abc")',
    'regexp("^a", "bac")', 'regexp("A", "abc", "i")', 'regexp("A", "abc")', 'regexp("(", "abc")',
    "regexp(1, \"abc\")", 'regexp(undefined, "a")', 'stringListMember("a", "b,a")',
    'stringListMember("A", "b,a")', 'stringListIMember("A", "b,a")', 'stringListMember("c", "a b c")',
    'stringListSize("a, b ,c")', 'stringListSize("")', 'stringListSize("a;b;c", ";")',
    'stringListMember("b", "a;b", ";")', "stringListSize(undefined)", 'split("a b,c")',
    'split("a;b;;c", ";")', 'split("")', 'join(",", {"a", "b"})', 'join(",", "a", "b")',
    'join({"a", "b"})', 'join(",", {1, 2.5, true})', "join(\",\", {})", "foo(1)", "f()",
    "unknownFunc(x)", "IsUndefined(x)", "INT(2.5)", "StrCat(\"a\", \"b\")",
    "stringListMember(\"b\", Csv)", "stringListSize(Csv)", "split(Csv)", "toUpper(Mixed)",
    "strcat(Name, \"-\", Cpus)", "size(List)", "member(2, List)", "int(LoadAvg * 100)",
    "ifThenElse(isUndefined(Missing), 0, Missing)",
]

UNPARSE_ONLY = [
    "a&&b||c", "a||b&&c", "(a||b)&&c", "a ? b : c ? d : e", "(a ? b : c) ? d : e", "a-(b-c)",
    "a-b-c", "a == b == c", "a==(b==c)", "x[1][2]", "a.b.c", "MY.a.b", "TARGET.a", "Foo.Bar",
    "a -1", "-x.y", "-a[1]", "!a.b", "x . y", "a & b | c ^ d", "f(a, b, c)", "f()",
    "'a b' + 1", "a ? b ?: c : d", "a || b ? c : d", "{ a, { b, c } }", "[ a = 1; b = { 1 } ]",
    "strcat(a, \"x\") + 1", "a =?= b", "a =!= b", "a is b", "a isnt b", "x[a+1]",
    "- 2.5", "!!x", "-(-(x))", "a >>> b << c >> d", "a % b / c * d",
]

# (text, expected to be a syntax error)
BAD = [
    "", "1 +", "(1", "1)", "{1,", "[a=1", "a = b", "1 2", "0x10", "010", "1.", "a.(b)", "[ a = 1 b = 2 ]",
    '"unterminated', "f(1,", "? 1", "1 ? 2", "[ \"a b\" = 1 ]", "@", "a[1", "x ]",
]
