package sqllex

import "strconv"

// Dialect says how a dialect of SQL writes the tokens whose rules differ between dialects.
// The zero value is standard SQL: strings in single quotes with a quote doubled inside,
// identifiers in double quotes, -- and /* */ comments that do not nest, and \v counted as
// white space.
type Dialect struct {
	// DoubleQuotedStrings: "..." is a string constant (MySQL's default sql_mode), not a
	// quoted identifier.
	DoubleQuotedStrings bool
	// BackslashEscapes: a backslash escapes the next byte inside '...', "...", N'...',
	// X'...' and B'...' strings, and a word that starts with _ before a quote is a charset
	// introducer whose string takes escapes too (_utf8mb4'...'): MySQL's default. E'...'
	// strings take escapes in every dialect.
	BackslashEscapes bool
	// DollarQuotes: $tag$...$tag$ is a string constant (PostgreSQL).
	DollarQuotes bool
	// HashComments: # starts a comment to the end of the line (MySQL).
	HashComments bool
	// NestedComments: /* ... */ comments nest (PostgreSQL).
	NestedComments bool
	// QQuotes: q'<...>' is a string constant with a delimiter of the writer's choice,
	// brackets closed by their mate (Firebird 3).
	QQuotes bool
	// Backticks: `...` is a quoted identifier (MySQL).
	Backticks bool
	// CRNewline: a carriage return ends a line comment as a newline does (PostgreSQL's
	// scanners take \n or \r as a newline); otherwise only \n ends one.
	CRNewline bool
	// NumericJunk: numbers follow PostgreSQL 15's grammar (digits, a fraction, an
	// exponent), and an identifier directly after a number or a $n marker is part of its
	// token, as PostgreSQL 15's junk rules lex 123abc, 1.5e3x and $1a$b (which psql passes
	// on and the server refuses). Otherwise a number takes the letters, digits, dots and
	// underscores after it (hexadecimal, octal and binary forms, digit separators) and a $n
	// marker only its digits.
	NumericJunk bool
	// VerticalTabText: \v is not white space but an Other byte, as in psql of PostgreSQL
	// 15 (its psqlscan.l's {space} is [ \t\n\r\f]); PostgreSQL 17's scanners and MySQL take
	// \v as white space.
	VerticalTabText bool
}

// Kind says what a Token is.
type Kind uint8

const (
	// EOF is the end of the text; it has no bytes.
	EOF Kind = iota
	// Space is a run of white space: space, \t, \n, \r, \f and \v (but see
	// Dialect.VerticalTabText).
	Space
	// LineComment is -- (or # where the dialect has HashComments) up to the end of the
	// line; the newline that ends it is not part of it.
	LineComment
	// BlockComment is /* ... */, nested where the dialect nests them.
	BlockComment
	// Word is a keyword or an unquoted identifier: an ASCII letter, _ or a byte of a
	// non-ASCII UTF-8 character, then those, digits and $.
	Word
	// QuotedIdent is an identifier in double quotes (unless the dialect's "..." are
	// strings) or backticks (Dialect.Backticks), quotes included; a quote doubled inside
	// stands for itself.
	QuotedIdent
	// String is a string constant with its prefix and quotes: '...', E'...', N'...',
	// X'...', B'...', U&'...', $tag$...$tag$, q'{...}', _charset'...' and "..." where the
	// dialect has them.
	String
	// Number is a numeric constant without a sign: digits, a fraction, an exponent, and the
	// letters and underscores of hexadecimal, octal and binary forms and digit separators
	// (see Dialect.NumericJunk).
	Number
	// Param is a parameter marker: ? or $n (see Dialect.NumericJunk).
	Param
	// Other is one byte that starts no other token: punctuation (; , ( ) [ ] . :), one
	// character of an operator, a backslash outside quotes.
	Other
)

var kindNames = [...]string{EOF: "EOF", Space: "Space", LineComment: "LineComment", BlockComment: "BlockComment",
	Word: "Word", QuotedIdent: "QuotedIdent", String: "String", Number: "Number", Param: "Param", Other: "Other"}

// String returns the kind's name, as its constant is spelled.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Blank reports whether a token of kind k only separates others: white space or a comment.
func (k Kind) Blank() bool { return k == Space || k == LineComment || k == BlockComment }

// Token is one token of a text.
type Token struct {
	Kind Kind
	// Start and End are the token's offsets in the text: it is src[Start:End].
	Start, End int
	// Unterminated: a String, QuotedIdent or BlockComment that the text ends inside, so it
	// runs to the end of the text.
	Unterminated bool
}

// Lexer splits a text into tokens, one at a time. Its zero value lexes an empty text. A
// Lexer is a small value that holds a reference to the text; it is not safe for
// concurrent use, but copies of it lex independently.
type Lexer struct {
	src   []byte
	pos   int
	d     Dialect
	space uint8 // the byte classes that are white space in d
}

// New returns a Lexer at the start of src that lexes by the rules of d.
func New(src []byte, d Dialect) Lexer {
	l := Lexer{src: src, d: d, space: clSpace | clVTab}
	if d.VerticalTabText {
		l.space = clSpace
	}
	return l
}

// Next returns the token at the lexer's position and moves past it. At the end of the text
// it returns EOF, again on every call.
func (l *Lexer) Next() Token {
	i := l.pos
	if i >= len(l.src) {
		return Token{Kind: EOF, Start: len(l.src), End: len(l.src)}
	}
	// Hand over to the scanner that the token's first byte selects. A switch, not calls
	// through a table of functions, which would move every Lexer to the heap: an
	// allocation per statement normalised.
	var k Kind
	var end int
	var open bool
	switch starts[l.src[i]] {
	case scSpace:
		k, end, open = scanSpace(l, i)
	case scWord:
		k, end, open = scanWord(l, i)
	case scDigit:
		k, end, open = scanNumber(l, i)
	case scDash:
		k, end, open = scanDash(l, i)
	case scHash:
		k, end, open = scanHash(l, i)
	case scSlash:
		k, end, open = scanSlash(l, i)
	case scQuote:
		k, end, open = scanQuote(l, i)
	case scDoubleQuote:
		k, end, open = scanDoubleQuote(l, i)
	case scBacktick:
		k, end, open = scanBacktick(l, i)
	case scDot:
		k, end, open = scanDot(l, i)
	case scQuestion:
		k, end, open = scanQuestion(l, i)
	case scDollar:
		k, end, open = scanDollar(l, i)
	default:
		k, end, open = scanOther(l, i)
	}
	l.pos = end
	return Token{Kind: k, Start: i, End: end, Unterminated: open}
}

// Pos returns the offset in the text of the next token.
func (l *Lexer) Pos() int { return l.pos }

// Seek moves the lexer to offset pos of the text (0 <= pos <= len(text)); Next then lexes
// the text from there as if it began there, since no token depends on what precedes it.
// A caller that takes some bytes itself (a script's :variable) seeks past them.
func (l *Lexer) Seek(pos int) { l.pos = pos }

// IsWordByte reports whether c can continue a Word: an ASCII letter or digit, _, $, or a
// byte of a non-ASCII UTF-8 character.
func IsWordByte(c byte) bool { return class[c]&clWord != 0 }
