package script

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// funcID identifies a built-in function.
type funcID uint8

const (
	fnAbs funcID = iota
	fnDebug
	fnDouble
	fnExp
	fnGreatest
	fnHashFNV1a
	fnHashMurmur2
	fnInt
	fnLeast
	fnLn
	fnMod
	fnPermute
	fnPi
	fnPow
	fnRandom
	fnRandomExponential
	fnRandomGaussian
	fnRandomZipfian
	fnSqrt
)

// maxFuncArgs is pgbench's MAX_FARGS: a function evaluates at most 16 arguments (pgbench
// fails at run time beyond; here it is a parse error).
const maxFuncArgs = 16

// funcDef describes a function: its canonical name and how many arguments it takes
// (max -1: any number).
type funcDef struct {
	name     string
	min, max int
	seeded   bool // the last argument, a seed, defaults to :default_seed
}

func (d *funcDef) arity() string {
	switch {
	case d.max < 0:
		return fmt.Sprintf("at least %d argument", d.min)
	case d.min == d.max && d.min == 1:
		return "1 argument"
	case d.min == d.max:
		return fmt.Sprintf("%d arguments", d.min)
	}
	return fmt.Sprintf("%d or %d arguments", d.min, d.max)
}

// funcs is pgbench's function table (exprparse.y PGBENCH_FUNCTIONS), the operators apart.
var funcs = [...]funcDef{
	fnAbs:               {name: "abs", min: 1, max: 1},
	fnDebug:             {name: "debug", min: 1, max: 1},
	fnDouble:            {name: "double", min: 1, max: 1},
	fnExp:               {name: "exp", min: 1, max: 1},
	fnGreatest:          {name: "greatest", min: 1, max: -1},
	fnHashFNV1a:         {name: "hash_fnv1a", min: 1, max: 2, seeded: true},
	fnHashMurmur2:       {name: "hash_murmur2", min: 1, max: 2, seeded: true},
	fnInt:               {name: "int", min: 1, max: 1},
	fnLeast:             {name: "least", min: 1, max: -1},
	fnLn:                {name: "ln", min: 1, max: 1},
	fnMod:               {name: "mod", min: 2, max: 2},
	fnPermute:           {name: "permute", min: 2, max: 3, seeded: true},
	fnPi:                {name: "pi", min: 0, max: 0},
	fnPow:               {name: "pow", min: 2, max: 2},
	fnRandom:            {name: "random", min: 2, max: 2},
	fnRandomExponential: {name: "random_exponential", min: 3, max: 3},
	fnRandomGaussian:    {name: "random_gaussian", min: 3, max: 3},
	fnRandomZipfian:     {name: "random_zipfian", min: 3, max: 3},
	fnSqrt:              {name: "sqrt", min: 1, max: 1},
}

// funcByName maps every accepted name (lower case; calls match it ignoring case) to its
// function: hash is hash_murmur2, power is pow.
var funcByName = func() map[string]funcID {
	m := map[string]funcID{"hash": fnHashMurmur2, "power": fnPow}
	for i := range funcs {
		m[funcs[i].name] = funcID(i)
	}
	return m
}()

func funcNames() []string {
	names := make([]string, 0, len(funcByName))
	for n := range funcByName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// evalError is an expression's failure at run time: pgbench's message.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func evalErrorf(format string, args ...any) error { return &evalError{fmt.Sprintf(format, args...)} }

// errNoClient is returned when a function that needs a client (random_*, debug) is met
// while evaluating a constant at parse time.
var errNoClient = errors.New("needs a client")

func toInt(v Value) (int64, error) {
	switch v.kind {
	case KindInt:
		return v.AsInt(), nil
	case KindDouble:
		d := math.RoundToEven(v.AsDouble()) // C's rint in the default rounding mode
		// FLOAT8_FITS_IN_INT64: -2^63 <= d < 2^63
		if math.IsNaN(d) || d < -0x1p63 || d >= 0x1p63 {
			return 0, evalErrorf("double to int overflow for %s", strconv.FormatFloat(d, 'f', 6, 64))
		}
		return int64(d), nil
	}
	return 0, evalErrorf("cannot coerce %s to int", v.kind)
}

func toDouble(v Value) (float64, error) {
	switch v.kind {
	case KindDouble:
		return v.AsDouble(), nil
	case KindInt:
		return float64(v.AsInt()), nil
	}
	return 0, evalErrorf("cannot coerce %s to double", v.kind)
}

func toBool(v Value) (bool, error) {
	if v.kind == KindBool {
		return v.AsBool(), nil
	}
	return false, evalErrorf("cannot coerce %s to boolean", v.kind)
}

// truth is pgbench's valueTruth, for \if and CASE: non-zero numbers and true are true,
// zero, false and NULL are false.
func truth(v Value) bool {
	switch v.kind {
	case KindBool, KindInt:
		return v.bits != 0
	case KindDouble:
		return v.AsDouble() != 0
	}
	return false
}

// arith applies a binary arithmetic or comparison operator with pgbench's rules: doubles
// if either side is a double (except %, always integer), integers otherwise, with integer
// overflow and integer division by zero being errors.
func arith(op opcode, l, r Value) (Value, error) {
	if (l.kind == KindDouble || r.kind == KindDouble) && op != opMod {
		ld, err := toDouble(l)
		if err != nil {
			return Value{}, err
		}
		rd, err := toDouble(r)
		if err != nil {
			return Value{}, err
		}
		switch op {
		case opAdd:
			return Double(ld + rd), nil
		case opSub:
			return Double(ld - rd), nil
		case opMul:
			return Double(ld * rd), nil
		case opDiv:
			return Double(ld / rd), nil
		case opEq:
			return Bool(ld == rd), nil
		case opNe:
			return Bool(ld != rd), nil
		case opLe:
			return Bool(ld <= rd), nil
		}
		return Bool(ld < rd), nil // opLt
	}
	li, err := toInt(l)
	if err != nil {
		return Value{}, err
	}
	ri, err := toInt(r)
	if err != nil {
		return Value{}, err
	}
	switch op {
	case opAdd:
		s := li + ri
		if (s > li) != (ri > 0) {
			return Value{}, evalErrorf("bigint add out of range")
		}
		return Int(s), nil
	case opSub:
		s := li - ri
		if (s < li) != (ri > 0) {
			return Value{}, evalErrorf("bigint sub out of range")
		}
		return Int(s), nil
	case opMul:
		p, ok := mul64(li, ri)
		if !ok {
			return Value{}, evalErrorf("bigint mul out of range")
		}
		return Int(p), nil
	case opEq:
		return Bool(li == ri), nil
	case opNe:
		return Bool(li != ri), nil
	case opLe:
		return Bool(li <= ri), nil
	case opLt:
		return Bool(li < ri), nil
	}
	// opDiv, opMod
	if ri == 0 {
		return Value{}, evalErrorf("division by zero")
	}
	if ri == -1 {
		if op == opMod {
			return Int(0), nil
		}
		if li == math.MinInt64 {
			return Value{}, evalErrorf("bigint div out of range")
		}
		return Int(-li), nil
	}
	if op == opDiv {
		return Int(li / ri), nil
	}
	return Int(li % ri), nil
}

// mul64 multiplies with overflow detection.
func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// bitwise applies an integer bitwise operator. Shift counts are taken modulo 64, as the
// x86-64 shift instructions that pgbench's C shifts compile to do (C leaves shifts by a
// negative count or by 64 or more undefined).
func bitwise(op opcode, l, r Value) (Value, error) {
	li, err := toInt(l)
	if err != nil {
		return Value{}, err
	}
	ri, err := toInt(r)
	if err != nil {
		return Value{}, err
	}
	switch op {
	case opBitAnd:
		return Int(li & ri), nil
	case opBitOr:
		return Int(li | ri), nil
	case opBitXor:
		return Int(li ^ ri), nil
	case opShl:
		return Int(li << (uint64(ri) & 63)), nil
	}
	return Int(li >> (uint64(ri) & 63)), nil
}

// callFunc applies function f to evaluated arguments; r is the client's generator (nil
// when folding constants at parse time). A NULL argument makes the result NULL, except for
// debug.
func callFunc(f funcID, args []Value, r *PRNG, debug func(Value)) (Value, error) {
	if f != fnDebug {
		for _, a := range args {
			if a.kind == KindNull {
				return Null(), nil
			}
		}
	}
	switch f {
	case fnPi:
		return Double(math.Pi), nil
	case fnAbs:
		a := args[0]
		switch a.kind {
		case KindInt:
			if i := a.AsInt(); i < 0 {
				return Int(-i), nil // -MinInt64 wraps to itself, as in C
			}
			return a, nil
		case KindDouble:
			return Double(math.Abs(a.AsDouble())), nil
		}
		return Value{}, evalErrorf("cannot coerce %s to int or double", a.kind)
	case fnDebug:
		if debug == nil {
			return Value{}, errNoClient
		}
		debug(args[0])
		return args[0], nil
	case fnDouble, fnSqrt, fnLn, fnExp:
		d, err := toDouble(args[0])
		if err != nil {
			return Value{}, err
		}
		switch f {
		case fnSqrt:
			d = math.Sqrt(d)
		case fnLn:
			d = math.Log(d)
		case fnExp:
			d = math.Exp(d)
		}
		return Double(d), nil
	case fnInt:
		i, err := toInt(args[0])
		return Int(i), err
	case fnMod:
		return arith(opMod, args[0], args[1])
	case fnLeast, fnGreatest:
		return extremum(f == fnLeast, args)
	case fnRandom, fnRandomExponential, fnRandomGaussian, fnRandomZipfian:
		return random(f, args, r)
	case fnPow:
		x, err := toDouble(args[0])
		if err != nil {
			return Value{}, err
		}
		y, err := toDouble(args[1])
		if err != nil {
			return Value{}, err
		}
		return Double(math.Pow(x, y)), nil
	case fnHashFNV1a, fnHashMurmur2:
		v, err := toInt(args[0])
		if err != nil {
			return Value{}, err
		}
		seed, err := toInt(args[1])
		if err != nil {
			return Value{}, err
		}
		if f == fnHashFNV1a {
			return Int(HashFNV1a(v, seed)), nil
		}
		return Int(HashMurmur2(v, seed)), nil
	case fnPermute:
		var x [3]int64
		for i := range x {
			var err error
			if x[i], err = toInt(args[i]); err != nil {
				return Value{}, err
			}
		}
		if x[1] <= 0 {
			return Value{}, evalErrorf("permute size parameter must be greater than zero")
		}
		return Int(Permute(x[0], x[1], x[2])), nil
	}
	return Value{}, fmt.Errorf("unknown function %d", f)
}

// extremum is least() and greatest(): doubles if any argument is a double, else integers.
func extremum(least bool, args []Value) (Value, error) {
	double := false
	for _, a := range args {
		if a.kind == KindDouble {
			double = true
		}
	}
	if double {
		m, err := toDouble(args[0])
		if err != nil {
			return Value{}, err
		}
		for _, a := range args[1:] {
			d, err := toDouble(a)
			if err != nil {
				return Value{}, err
			}
			// C's Min/Max macros: a comparison, so a NaN argument behaves as in pgbench.
			if least && d < m || !least && d > m {
				m = d
			}
		}
		return Double(m), nil
	}
	m, err := toInt(args[0])
	if err != nil {
		return Value{}, err
	}
	for _, a := range args[1:] {
		i, err := toInt(a)
		if err != nil {
			return Value{}, err
		}
		if least && i < m || !least && i > m {
			m = i
		}
	}
	return Int(m), nil
}

// random evaluates the random functions after checking their arguments as pgbench does.
func random(f funcID, args []Value, r *PRNG) (Value, error) {
	lo, err := toInt(args[0])
	if err != nil {
		return Value{}, err
	}
	hi, err := toInt(args[1])
	if err != nil {
		return Value{}, err
	}
	if lo > hi {
		return Value{}, evalErrorf("empty range given to random: %d > %d", lo, hi)
	}
	if d := hi - lo; d < 0 || d == math.MaxInt64 { // hi-lo+1 overflows
		return Value{}, evalErrorf("random range is too large")
	}
	var p float64
	if f != fnRandom {
		if p, err = toDouble(args[2]); err != nil {
			return Value{}, err
		}
		if err := checkRandomParam(f, p); err != nil {
			return Value{}, err
		}
	}
	if r == nil {
		return Value{}, errNoClient
	}
	switch f {
	case fnRandomExponential:
		return Int(r.exponential(lo, hi, p)), nil
	case fnRandomGaussian:
		return Int(r.gaussian(lo, hi, p)), nil
	case fnRandomZipfian:
		return Int(r.zipfian(lo, hi, p)), nil
	}
	return Int(r.uniform(lo, hi)), nil
}

// checkRandomParam checks the third argument of the random_* functions.
func checkRandomParam(f funcID, p float64) error {
	switch f {
	case fnRandomGaussian:
		if !(p >= minGaussianParam) {
			return evalErrorf("gaussian parameter must be at least %.1f (not %g)", minGaussianParam, p)
		}
	case fnRandomZipfian:
		if !(p >= minZipfianParam && p <= maxZipfianParam) {
			return evalErrorf("zipfian parameter must be in range [%.3f, %.0f] (not %g)", minZipfianParam, maxZipfianParam, p)
		}
	case fnRandomExponential:
		if !(p > 0) {
			return evalErrorf("exponential parameter must be greater than zero (not %g)", p)
		}
	}
	return nil
}
