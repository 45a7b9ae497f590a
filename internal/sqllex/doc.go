// Package sqllex splits SQL text into tokens, by the lexical rules of the dialect it is
// given: white space, comments, words, quoted identifiers, string constants, numbers,
// parameter markers and single bytes of punctuation. It is the one SQL lexer of dblat.
//
// # What it does
//
// A Lexer walks a text token by token (Next) and never fails: a string, quoted identifier
// or comment that the text ends inside runs to the end and is marked Unterminated, and any
// byte that starts no other token is a token of its own (Other). The tokens tile the text,
// and each is lexed from its first byte alone, without looking back, so lexing may resume
// anywhere (Seek): a caller that takes a few bytes itself, such as a script language's
// :variable, lexes on after them. It does not allocate.
//
// A Dialect says where the dialects' rules differ: how strings and identifiers are quoted
// (MySQL's "strings" and `identifiers`, PostgreSQL's $tag$ strings, Firebird's q'{...}'),
// whether a backslash escapes inside quotes, which comments exist and whether /* */ nest,
// and three fine points of PostgreSQL 15's scanners (CRNewline, NumericJunk,
// VerticalTabText), which psql's rules need. The zero Dialect is standard SQL.
// PostgreSQL's E'...' strings take backslash escapes in every dialect, and N'...',
// X'...', B'...' and U&'...' strings are one token with their prefix.
//
// # What it does not do
//
// It neither parses nor checks what a token holds: an escape, a number's digits and a
// Unicode escape are not validated, a keyword is a Word like any identifier, and an
// operator is a run of Other bytes. It does not split statements, which is a policy of its
// callers (a procedure's body holds semicolons that one caller must keep and another must
// not), and it knows nothing of psql's meta-commands or of variables.
//
// # Neighbours
//
// Package wire normalises statements seen on the wire (pg_stat_statements' shapes, literals
// removed) and finds transaction control with it, each engine giving its dialect
// (wire.Lexicon is Dialect); package script splits pgbench scripts into statements and
// finds their :variables and meta-commands on its tokens. Package sqllex imports nothing of
// dblat.
package sqllex
