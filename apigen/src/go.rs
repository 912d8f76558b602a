//! Just enough Go to read k8s.io/api's `types.go` files: type declarations (structs with
//! their fields' types, tags and comment markers; named types), and the `const` blocks
//! that list a named string type's values (kube's `+enum`s).
//!
//! The files are gofmt'd and generated-code-free, so a line-oriented reader over a small
//! tokenizer is enough; anything else at the top level (functions, methods, `var`s) is
//! skipped by matching braces. A construct this reader does not know is an error naming
//! its line, never a silent guess.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

/// A type declared at the top level of a file.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDecl {
    /// `PodSpec`.
    pub name: String,
    /// The `+key=value` markers of the comment above it (the lines after the last blank
    /// comment line and those in the comment block before it, as kube's generators read
    /// them).
    pub markers: Markers,
    /// What it is.
    pub body: TypeBody,
}

/// The right-hand side of a type declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeBody {
    /// `struct { ... }`.
    Struct(Vec<FieldDecl>),
    /// `type X string`, `type X map[string]Y`, `type X []string`.
    Named(GoType),
    /// `type X = v1.X`: another name for a type, not a type of its own (k8s.io/api's
    /// `admissionregistration/v1beta1` names `v1`'s rules so).
    Alias(GoType),
}

/// One field of a struct.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    /// The Go name; for an embedded field, its type's name (`ObjectMeta`).
    pub name: String,
    /// Whether the field is embedded (no name of its own).
    pub embedded: bool,
    /// Its type.
    pub ty: GoType,
    /// The struct tag's keys and values (`json` → `metadata,omitempty`).
    pub tags: BTreeMap<String, String>,
    /// Markers of the comment above it.
    pub markers: Markers,
}

/// A Go type expression.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GoType {
    /// `T` or `pkg.T`: the package alias (empty for this package) and the name.
    Name(String, String),
    /// `*T`.
    Pointer(Box<GoType>),
    /// `[]T`.
    Slice(Box<GoType>),
    /// `map[K]V`.
    Map(Box<GoType>, Box<GoType>),
}

/// Comment markers: `// +listType=map` is `listType` → `["map"]`; a marker without a value
/// has an empty string; repeated markers (`+listMapKey`) keep every value in order.
pub type Markers = BTreeMap<String, Vec<String>>;

/// A `const` of a named type: `ProtocolTCP Protocol = "TCP"`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstDecl {
    /// `ProtocolTCP`.
    pub name: String,
    /// `Protocol`.
    pub ty: String,
    /// `TCP`: the string value.
    pub value: String,
}

/// What a file declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    /// Types, in file order.
    pub types: Vec<TypeDecl>,
    /// Typed string constants, in file order.
    pub consts: Vec<ConstDecl>,
    /// `import` aliases to their paths (`metav1` → `k8s.io/apimachinery/pkg/apis/meta/v1`);
    /// an import without an alias is named by its last path segment.
    pub imports: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    /// A `"..."` string's value, or a raw `` `...` `` string's text.
    Str(String),
    /// A raw string: the struct tag.
    Raw(String),
    Punct(char),
    /// A `//` comment's text after the slashes.
    Comment(String),
    /// A line break (gofmt puts declarations and fields on lines of their own).
    Newline,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    text: &'a str,
    line: usize,
}

fn tokenize(text: &str) -> Result<Vec<(usize, Token)>> {
    let mut lexer = Lexer {
        chars: text.char_indices().peekable(),
        text,
        line: 1,
    };
    let mut tokens = Vec::new();
    while let Some(&(at, c)) = lexer.chars.peek() {
        let line = lexer.line;
        match c {
            '\n' => {
                lexer.chars.next();
                lexer.line += 1;
                tokens.push((line, Token::Newline));
            }
            c if c.is_whitespace() => {
                lexer.chars.next();
            }
            '/' if lexer.text[at..].starts_with("//") => {
                let end = lexer.text[at..]
                    .find('\n')
                    .map_or(lexer.text.len(), |n| at + n);
                tokens.push((line, Token::Comment(lexer.text[at + 2..end].to_string())));
                while lexer.chars.peek().is_some_and(|&(i, _)| i < end) {
                    lexer.chars.next();
                }
            }
            '/' if lexer.text[at..].starts_with("/*") => {
                let Some(end) = lexer.text[at..].find("*/") else {
                    bail!("line {line}: unterminated comment");
                };
                let body = &lexer.text[at..at + end + 2];
                lexer.line += body.matches('\n').count();
                while lexer.chars.peek().is_some_and(|&(i, _)| i < at + end + 2) {
                    lexer.chars.next();
                }
            }
            '"' => {
                lexer.chars.next();
                let mut value = String::new();
                loop {
                    match lexer.chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match lexer.chars.next() {
                            Some((_, c)) => value.push(c),
                            None => bail!("line {line}: unterminated string"),
                        },
                        Some((_, '\n')) | None => bail!("line {line}: unterminated string"),
                        Some((_, c)) => value.push(c),
                    }
                }
                tokens.push((line, Token::Str(value)));
            }
            '`' => {
                lexer.chars.next();
                let mut value = String::new();
                loop {
                    match lexer.chars.next() {
                        Some((_, '`')) => break,
                        Some((_, c)) => {
                            if c == '\n' {
                                lexer.line += 1;
                            }
                            value.push(c);
                        }
                        None => bail!("line {line}: unterminated raw string"),
                    }
                }
                tokens.push((line, Token::Raw(value)));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut ident = String::new();
                while let Some(&(_, c)) = lexer.chars.peek() {
                    if !(c.is_alphanumeric() || c == '_' || c == '.') {
                        break;
                    }
                    ident.push(c);
                    lexer.chars.next();
                }
                tokens.push((line, Token::Ident(ident)));
            }
            '\'' => {
                // A rune literal: skipped whole (only function bodies have them).
                lexer.chars.next();
                while let Some((_, c)) = lexer.chars.next() {
                    match c {
                        '\\' => {
                            lexer.chars.next();
                        }
                        '\'' => break,
                        _ => {}
                    }
                }
                tokens.push((line, Token::Punct('\'')));
            }
            c => {
                lexer.chars.next();
                tokens.push((line, Token::Punct(c)));
            }
        }
    }
    Ok(tokens)
}

/// Reads a Go file.
pub fn parse(text: &str) -> Result<File> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        comments: Vec::new(),
    };
    let mut file = File::default();
    parser.file(&mut file)?;
    Ok(file)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
    /// The comment lines just above the current position, since the last blank line or
    /// code; a blank line keeps the block above it (kube's generators read both the
    /// comment right above a declaration and the one before it).
    comments: Vec<String>,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|(_, t)| t)
    }

    fn line(&self) -> usize {
        self.tokens.get(self.at).map_or(0, |(l, _)| *l)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).map(|(_, t)| t.clone());
        self.at += 1;
        token
    }

    /// Skips line breaks and comments, collecting the comments.
    fn skip_space(&mut self) {
        let mut blank = 0;
        while let Some(token) = self.peek() {
            match token {
                Token::Newline => {
                    blank += 1;
                    if blank > 1 {
                        // A blank line: a following comment starts a new block, but the
                        // block above stays (markers may sit one block up).
                        self.comments.push(String::new());
                    }
                }
                Token::Comment(text) => {
                    blank = 0;
                    self.comments.push(text.clone());
                }
                _ => return,
            }
            self.at += 1;
        }
    }

    fn take_markers(&mut self) -> Markers {
        let markers = markers(&self.comments);
        self.comments.clear();
        markers
    }

    fn expect(&mut self, c: char) -> Result<()> {
        let line = self.line();
        match self.next() {
            Some(Token::Punct(p)) if p == c => Ok(()),
            other => bail!("line {line}: expected `{c}`, found {other:?}"),
        }
    }

    fn ident(&mut self) -> Result<String> {
        let line = self.line();
        match self.next() {
            Some(Token::Ident(name)) => Ok(name),
            other => bail!("line {line}: expected a name, found {other:?}"),
        }
    }

    fn file(&mut self, file: &mut File) -> Result<()> {
        loop {
            self.skip_space();
            let Some(token) = self.next() else {
                return Ok(());
            };
            match token {
                Token::Ident(word) if word == "package" => {
                    self.ident()?;
                    self.comments.clear();
                }
                Token::Ident(word) if word == "import" => self.imports(file)?,
                Token::Ident(word) if word == "type" => {
                    if self.peek() == Some(&Token::Punct('(')) {
                        self.next();
                        loop {
                            self.skip_space();
                            if self.peek() == Some(&Token::Punct(')')) {
                                self.next();
                                break;
                            }
                            let decl = self.type_spec()?;
                            file.types.push(decl);
                        }
                    } else {
                        let decl = self.type_spec()?;
                        file.types.push(decl);
                    }
                    self.comments.clear();
                }
                Token::Ident(word) if word == "const" => {
                    self.consts(file)?;
                    self.comments.clear();
                }
                Token::Ident(word) if word == "func" || word == "var" => {
                    self.skip_declaration()?;
                    self.comments.clear();
                }
                other => bail!(
                    "line {}: unexpected {other:?} at the top level",
                    self.line()
                ),
            }
        }
    }

    fn imports(&mut self, file: &mut File) -> Result<()> {
        let mut one = |parser: &mut Parser| -> Result<()> {
            let alias = match parser.next() {
                Some(Token::Ident(alias)) => Some(alias),
                Some(Token::Str(path)) => {
                    let name = path.rsplit('/').next().unwrap_or(&path).to_string();
                    file.imports.insert(name, path);
                    return Ok(());
                }
                Some(Token::Punct('_')) => None,
                other => bail!("line {}: bad import {other:?}", parser.line()),
            };
            match (alias, parser.next()) {
                (Some(alias), Some(Token::Str(path))) => {
                    file.imports.insert(alias, path);
                }
                (_, other) => bail!("line {}: bad import {other:?}", parser.line()),
            }
            Ok(())
        };
        if self.peek() == Some(&Token::Punct('(')) {
            self.next();
            loop {
                self.skip_space();
                if self.peek() == Some(&Token::Punct(')')) {
                    self.next();
                    break;
                }
                one(self)?;
            }
        } else {
            one(self)?;
        }
        self.comments.clear();
        Ok(())
    }

    fn type_spec(&mut self) -> Result<TypeDecl> {
        let markers = self.take_markers();
        let name = self.ident()?;
        // `type A = B`, an alias: another name for B.
        if self.peek() == Some(&Token::Punct('=')) {
            self.next();
            return Ok(TypeDecl {
                name,
                markers,
                body: TypeBody::Alias(self.go_type()?),
            });
        }
        let body = if self.peek() == Some(&Token::Ident("struct".into())) {
            self.next();
            TypeBody::Struct(self.struct_fields()?)
        } else {
            TypeBody::Named(self.go_type()?)
        };
        Ok(TypeDecl {
            name,
            markers,
            body,
        })
    }

    fn struct_fields(&mut self) -> Result<Vec<FieldDecl>> {
        self.expect('{')?;
        self.comments.clear();
        let mut fields = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(&Token::Punct('}')) {
                self.next();
                return Ok(fields);
            }
            let markers = self.take_markers();
            let line = self.line();
            // `Name Type` or an embedded `Type` / `pkg.Type` / `*Type`.
            let first = match self.peek() {
                Some(Token::Punct('*')) => None,
                _ => Some(self.ident()?),
            };
            let (name, embedded, ty) = match (first, self.peek()) {
                (Some(first), Some(Token::Raw(_) | Token::Newline | Token::Comment(_))) => {
                    let (alias, base) = split_name(&first);
                    (base.clone(), true, GoType::Name(alias, base))
                }
                (Some(first), _) => (first, false, self.go_type()?),
                (None, _) => {
                    let ty = self.go_type()?;
                    let name = match &ty {
                        GoType::Pointer(inner) => match inner.as_ref() {
                            GoType::Name(_, name) => name.clone(),
                            _ => bail!("line {line}: unsupported embedded field"),
                        },
                        _ => bail!("line {line}: unsupported embedded field"),
                    };
                    (name, true, ty)
                }
            };
            let tags = match self.peek() {
                Some(Token::Raw(_)) => match self.next() {
                    Some(Token::Raw(tag)) => parse_tag(&tag, line)?,
                    _ => unreachable!("peeked a raw string"),
                },
                _ => BTreeMap::new(),
            };
            // A trailing comment belongs to this field; it carries no markers we keep.
            if let Some(Token::Comment(_)) = self.peek() {
                self.next();
            }
            fields.push(FieldDecl {
                name,
                embedded,
                ty,
                tags,
                markers,
            });
        }
    }

    fn go_type(&mut self) -> Result<GoType> {
        let line = self.line();
        match self.next() {
            Some(Token::Punct('*')) => Ok(GoType::Pointer(Box::new(self.go_type()?))),
            Some(Token::Punct('[')) => {
                self.expect(']')?;
                Ok(GoType::Slice(Box::new(self.go_type()?)))
            }
            Some(Token::Ident(word)) if word == "map" => {
                self.expect('[')?;
                let key = self.go_type()?;
                self.expect(']')?;
                Ok(GoType::Map(Box::new(key), Box::new(self.go_type()?)))
            }
            Some(Token::Ident(name)) => {
                let (alias, base) = split_name(&name);
                Ok(GoType::Name(alias, base))
            }
            other => bail!("line {line}: expected a type, found {other:?}"),
        }
    }

    fn consts(&mut self, file: &mut File) -> Result<()> {
        let mut one = |parser: &mut Parser| -> Result<()> {
            // `Name Type = "value"`; untyped or computed constants are skipped.
            // `Name = Type("value")` is the same constant.
            let mut line_tokens = Vec::new();
            let mut depth = 0usize;
            while let Some(token) = parser.peek() {
                match token {
                    Token::Newline => break,
                    Token::Punct(')') if depth == 0 => break,
                    Token::Punct(')') => depth -= 1,
                    Token::Punct('(') => depth += 1,
                    _ => {}
                }
                line_tokens.push(parser.next().expect("peeked"));
            }
            match line_tokens.as_slice() {
                [
                    Token::Ident(name),
                    Token::Ident(ty),
                    Token::Punct('='),
                    Token::Str(value),
                    ..,
                ]
                | [
                    Token::Ident(name),
                    Token::Punct('='),
                    Token::Ident(ty),
                    Token::Punct('('),
                    Token::Str(value),
                    Token::Punct(')'),
                ] => file.consts.push(ConstDecl {
                    name: name.clone(),
                    ty: ty.clone(),
                    value: value.clone(),
                }),
                _ => {}
            }
            Ok(())
        };
        if self.peek() == Some(&Token::Punct('(')) {
            self.next();
            loop {
                self.skip_space();
                self.comments.clear();
                if self.peek() == Some(&Token::Punct(')')) {
                    self.next();
                    return Ok(());
                }
                one(self)?;
            }
        }
        one(self)
    }

    /// Skips a `func` or `var` declaration: to the end of its line, or of its braces.
    fn skip_declaration(&mut self) -> Result<()> {
        let mut depth = 0usize;
        while let Some(token) = self.next() {
            match token {
                Token::Punct('{' | '(' | '[') => depth += 1,
                Token::Punct('}' | ')' | ']') => depth = depth.saturating_sub(1),
                Token::Newline if depth == 0 => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
}

fn split_name(name: &str) -> (String, String) {
    match name.split_once('.') {
        Some((alias, base)) => (alias.to_string(), base.to_string()),
        None => (String::new(), name.to_string()),
    }
}

/// A struct tag: `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`.
fn parse_tag(tag: &str, line: usize) -> Result<BTreeMap<String, String>> {
    let mut tags = BTreeMap::new();
    let mut rest = tag.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once(":\"") else {
            bail!("line {line}: bad struct tag `{tag}`");
        };
        let Some(end) = after.find('"') else {
            bail!("line {line}: bad struct tag `{tag}`");
        };
        tags.insert(key.trim().to_string(), after[..end].to_string());
        rest = after[end + 1..].trim_start();
    }
    Ok(tags)
}

/// The `+key=value` markers of comment lines.
fn markers(comments: &[String]) -> Markers {
    let mut markers = Markers::new();
    for line in comments {
        let line = line.trim();
        let Some(marker) = line.strip_prefix('+') else {
            continue;
        };
        // `+k8s:openapi-gen=false`, `+listMapKey=name`, `+optional`, `+enum`.
        let (key, value) = marker.split_once('=').unwrap_or((marker, ""));
        if key.is_empty() || key.contains(' ') {
            continue;
        }
        markers
            .entry(key.to_string())
            .or_default()
            .push(value.trim().to_string());
    }
    markers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_structs_named_types_and_enums() {
        let file = parse(
            r#"package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Pod is a pod.
type Pod struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// +listType=map
	// +listMapKey=name
	// +listMapKey=protocol
	Ports []ContainerPort `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,2,rep,name=ports"`
	Port *intstr.IntOrString `json:"port" protobuf:"bytes,3,opt,name=port"` // trailing
	Data map[string][]byte `json:"data,omitempty" protobuf:"bytes,4,rep,name=data"`
}

// +enum
type Protocol string

const (
	// TCP.
	ProtocolTCP Protocol = "TCP"
	ProtocolUDP Protocol = "UDP"
	Untyped = 3
	ProtocolX = Protocol("X")
)

func (p *Pod) Method() string { return "}" }
"#,
        )
        .unwrap();
        assert_eq!(
            file.imports["intstr"],
            "k8s.io/apimachinery/pkg/util/intstr"
        );
        assert_eq!(file.types.len(), 2);
        let pod = &file.types[0];
        assert!(pod.markers.contains_key("genclient"));
        let TypeBody::Struct(fields) = &pod.body else {
            panic!("a struct")
        };
        assert_eq!(fields.len(), 5);
        assert!(fields[1].embedded);
        assert_eq!(fields[1].tags["json"], "metadata,omitempty");
        assert_eq!(fields[2].markers["listMapKey"], ["name", "protocol"]);
        assert_eq!(fields[2].tags["patchMergeKey"], "name");
        assert_eq!(
            fields[3].ty,
            GoType::Pointer(Box::new(GoType::Name(
                "intstr".into(),
                "IntOrString".into()
            )))
        );
        assert_eq!(
            fields[4].ty,
            GoType::Map(
                Box::new(GoType::Name(String::new(), "string".into())),
                Box::new(GoType::Slice(Box::new(GoType::Name(
                    String::new(),
                    "byte".into()
                ))))
            )
        );
        assert!(file.types[1].markers.contains_key("enum"));
        assert_eq!(file.consts.len(), 3);
        assert_eq!(file.consts[2].value, "X");
        assert_eq!(file.consts[1].value, "UDP");
    }

    #[test]
    fn reads_type_aliases_as_aliases() {
        let file = parse(
            r#"package v1beta1

import v1 "k8s.io/api/admissionregistration/v1"

// Rule is another package's.
type Rule = v1.Rule

type (
	ScopeType = v1.ScopeType
	Rules     = []Rule
)

const (
	AllScopes ScopeType = v1.AllScopes
)
"#,
        )
        .unwrap();
        let bodies: Vec<(&str, &TypeBody)> = (file.types.iter())
            .map(|t| (t.name.as_str(), &t.body))
            .collect();
        let rule = GoType::Name("v1".into(), "Rule".into());
        assert_eq!(
            bodies,
            [
                ("Rule", &TypeBody::Alias(rule)),
                (
                    "ScopeType",
                    &TypeBody::Alias(GoType::Name("v1".into(), "ScopeType".into()))
                ),
                (
                    "Rules",
                    &TypeBody::Alias(GoType::Slice(Box::new(GoType::Name(
                        String::new(),
                        "Rule".into()
                    ))))
                ),
            ]
        );
        // A constant valued by another package's is no enum value of this one.
        assert!(file.consts.is_empty());
    }
}
