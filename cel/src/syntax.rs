//! A rule's syntax tree, parsed by the `cel` crate (whose parser is cel-go's grammar and
//! macros, with cel-go's error texts) and taken into kapi's own tree, which the checker
//! types and the interpreter runs. Positions are kept by node id, for the checker's errors
//! (`ERROR: <input>:1:6: ...` with the source line and a caret, as cel-go prints them).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use cel::common::ast::{EntryExpr, Expr as CelExpr, IdedExpr, LiteralValue};

/// The deepest nesting the parser takes (cel-go's default, which kube keeps).
const MAX_RECURSION_DEPTH: u16 = 250;

/// A parsed expression with where each node came from.
#[derive(Clone, Debug)]
pub struct Ast {
    /// The root node.
    pub expr: Expr,
    /// The source text.
    pub source: Arc<str>,
    /// Each node's start, in bytes into the source.
    offsets: HashMap<u64, u32>,
    /// The largest node id, so that later passes can number new nodes.
    pub max_id: u64,
}

/// One node.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// Its id, unique in its tree.
    pub id: u64,
    /// What it is.
    pub kind: ExprKind,
}

/// What a node is.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Literal(Literal),
    /// A name: a variable, a type, or the first part of a qualified name.
    Ident(String),
    /// `operand.field`, or `has(operand.field)` when `test`.
    Select {
        /// What is selected from.
        operand: Box<Expr>,
        /// The field.
        field: String,
        /// A presence test.
        test: bool,
    },
    /// A function or operator applied, `target.function(args)` when it has a target.
    Call {
        /// The function (operators as cel-go names them, `_+_`).
        function: String,
        /// The receiver.
        target: Option<Box<Expr>>,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `[a, ?b]`.
    List {
        /// The elements.
        elements: Vec<Expr>,
        /// Which elements are optional (`?b`).
        optional: Vec<usize>,
    },
    /// `{k: v, ?k2: v2}`.
    Map {
        /// Key, value, and whether the entry is optional.
        entries: Vec<(Expr, Expr, bool)>,
    },
    /// `Type{field: value, ?field2: value2}`: a value of a type the environment declares
    /// (kube's `Object{...}` and `JSONPatch{...}` of mutating policies).
    Struct {
        /// The type's name, as written (`Object.spec`).
        name: String,
        /// Field, value, and whether the field is optional.
        fields: Vec<(String, Expr, bool)>,
    },
    /// A macro's loop.
    Comprehension(Box<Comprehension>),
}

/// A loop, as macros expand to: `accu = init; for v in range { if !cond break; accu =
/// step }; result`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    /// The list or map iterated.
    pub range: Expr,
    /// The element (or map key) variable.
    pub var: String,
    /// The second variable of two-variable comprehensions.
    pub var2: Option<String>,
    /// The accumulator variable.
    pub accu: String,
    /// The accumulator's first value.
    pub init: Expr,
    /// Whether to go on.
    pub cond: Expr,
    /// The accumulator's next value.
    pub step: Expr,
    /// The comprehension's value.
    pub result: Expr,
}

/// A literal's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true`, `false`.
    Bool(bool),
    /// `1`.
    Int(i64),
    /// `1u`.
    Uint(u64),
    /// `1.0`.
    Double(f64),
    /// `'a'`.
    String(Arc<str>),
    /// `b'a'`.
    Bytes(Arc<[u8]>),
}

/// Errors found in a source: cel-go's `Issues`, printed as cel-go prints them.
#[derive(Clone, Debug, PartialEq)]
pub struct Issues(pub Vec<Issue>);

/// One error, at a place in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1 (0 when unknown).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The source line, for the caret.
    pub snippet: Option<String>,
}

impl fmt::Display for Issues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, issue) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(
                f,
                "ERROR: <input>:{}:{}: {}",
                issue.line, issue.column, issue.message
            )?;
            if let Some(snippet) = &issue.snippet {
                // cel-go points at the column with dots, one per character before it.
                let dots = ".".repeat(issue.column.saturating_sub(1));
                write!(f, "\n | {snippet}\n | {dots}^")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Issues {}

impl Ast {
    /// Where node `id` starts: line and column, both from 1.
    pub fn position(&self, id: u64) -> (usize, usize) {
        let Some(&offset) = self.offsets.get(&id) else {
            return (1, 0);
        };
        position(&self.source, offset as usize)
    }

    /// An issue at node `id`.
    pub fn issue(&self, id: u64, message: impl Into<String>) -> Issue {
        let (line, column) = self.position(id);
        Issue {
            line,
            column,
            message: message.into(),
            snippet: (column > 0)
                .then(|| self.source.lines().nth(line - 1).map(str::to_owned))
                .flatten(),
        }
    }
}

/// The line and column (from 1, in characters) of byte `offset` in `source`.
fn position(source: &str, offset: usize) -> (usize, usize) {
    let mut line = 1;
    let mut line_start = 0;
    for (i, c) in source.char_indices() {
        if i >= offset {
            break;
        }
        if c == '\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    let column = source[line_start..offset.min(source.len())].chars().count() + 1;
    (line, column)
}

/// A parser with the standard macros and the optional library's (`optMap`, `optFlatMap`),
/// which the `cel` crate's standard environment has; with `two_var`, also cel-go's
/// two-variable comprehensions (`all(k, v, ...)`, `transformMap`, ...).
fn parser(two_var: bool) -> cel::parser::Parser {
    static ENV: std::sync::LazyLock<cel::Env> = std::sync::LazyLock::new(cel::Env::stdlib);
    static TWO_VAR: std::sync::LazyLock<cel::Env> = std::sync::LazyLock::new(|| {
        let mut env = cel::Env::stdlib();
        for m in crate::comprehensions::macros() {
            env.add_macro(m).expect("new macros");
        }
        env
    });
    if two_var {
        TWO_VAR.parser()
    } else {
        ENV.parser()
    }
}

/// The deepest tree the parser's limit lets through, as cel-go counts it.
const MAX_AST_DEPTH: usize = MAX_RECURSION_DEPTH as usize + 1;

/// How deep `e`'s tree is.
fn depth(e: &Expr) -> usize {
    crate::stack::guard(|| {
        1 + match &e.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => 0,
            ExprKind::Struct { fields, .. } => {
                fields.iter().map(|(_, v, _)| depth(v)).max().unwrap_or(0)
            }
            ExprKind::Select { operand, .. } => depth(operand),
            ExprKind::Call { target, args, .. } => (target.iter().map(|t| depth(t)))
                .chain(args.iter().map(depth))
                .max()
                .unwrap_or(0),
            ExprKind::List { elements, .. } => elements.iter().map(depth).max().unwrap_or(0),
            ExprKind::Map { entries } => (entries.iter())
                .map(|(k, v, _)| depth(k).max(depth(v)))
                .max()
                .unwrap_or(0),
            ExprKind::Comprehension(c) => [&c.range, &c.init, &c.cond, &c.step, &c.result]
                .into_iter()
                .map(depth)
                .max()
                .unwrap_or(0),
        }
    })
}

/// Parses `source` with optional syntax (`?.`, `[?..]`), as kube enables it.
pub fn parse(source: &str) -> Result<Ast, Issues> {
    parse_with(source, false)
}

/// Parses `source`, with two-variable comprehensions when `two_var`.
pub fn parse_with(source: &str, two_var: bool) -> Result<Ast, Issues> {
    let parsed = crate::stack::for_parser(|| {
        parser(two_var)
            .enable_optional_syntax(true)
            .max_recursion_depth(MAX_RECURSION_DEPTH)
            .parse_with_source_info(source)
    });
    let (root, info) = parsed.map_err(|errors| {
        let issues = errors.errors.into_iter().map(|error| {
            let (line, column) = (error.pos.0.max(1) as usize, error.pos.1.max(0) as usize);
            Issue {
                line,
                column,
                message: error.msg,
                snippet: source.lines().nth(line - 1).map(str::to_owned),
            }
        });
        Issues(issues.collect())
    })?;
    let mut offsets = HashMap::new();
    let mut max_id = 0;
    let expr = convert(&root, &info, &mut offsets, &mut max_id);
    // The `cel` crate counts only parenthesised nesting; cel-go counts every level, and
    // refuses a chain of 251 comparisons as kube's tests expect.
    if depth(&expr) > MAX_AST_DEPTH {
        return Err(Issues(vec![Issue {
            line: 1,
            column: 0,
            message: "max recursion depth exceeded".into(),
            snippet: None,
        }]));
    }
    Ok(Ast {
        expr,
        source: source.into(),
        offsets,
        max_id,
    })
}

/// `e` in kapi's tree, recording each node's offset.
fn convert(
    e: &IdedExpr,
    info: &cel::common::ast::SourceInfo,
    offsets: &mut HashMap<u64, u32>,
    max_id: &mut u64,
) -> Expr {
    crate::stack::guard(|| {
        if let Some((mut start, _)) = info.offset_for(e.id) {
            // A negative number's literal starts at its minus sign, as cel-go places it.
            let negative = matches!(&e.expr, CelExpr::Literal(LiteralValue::Int(i)) if *i.inner() < 0)
                || matches!(&e.expr, CelExpr::Literal(LiteralValue::Double(d)) if *d.inner() < 0.0);
            if negative
                && start > 0
                && info.source.as_bytes().get(start as usize - 1) == Some(&b'-')
            {
                start -= 1;
            }
            offsets.insert(e.id, start);
        }
        *max_id = (*max_id).max(e.id);
        let mut go = |e: &IdedExpr| convert(e, info, offsets, max_id);
        let kind = match &e.expr {
            CelExpr::Unspecified => ExprKind::Literal(Literal::Null),
            CelExpr::Literal(literal) => ExprKind::Literal(match literal {
                LiteralValue::Null => Literal::Null,
                LiteralValue::Boolean(b) => Literal::Bool(*b.inner()),
                LiteralValue::Int(i) => Literal::Int(*i.inner()),
                LiteralValue::UInt(u) => Literal::Uint(*u.inner()),
                LiteralValue::Double(d) => Literal::Double(*d.inner()),
                LiteralValue::String(s) => Literal::String(s.inner().into()),
                LiteralValue::Bytes(b) => Literal::Bytes(b.inner().into()),
            }),
            CelExpr::Ident(name) => ExprKind::Ident(name.clone()),
            CelExpr::Select(select) => ExprKind::Select {
                operand: Box::new(go(&select.operand)),
                field: select.field.clone(),
                test: select.test,
            },
            CelExpr::Call(call) => ExprKind::Call {
                function: call.func_name.clone(),
                target: call.target.as_ref().map(|t| Box::new(go(t))),
                args: call.args.iter().map(&mut go).collect(),
            },
            CelExpr::List(list) => ExprKind::List {
                elements: list.elements.iter().map(&mut go).collect(),
                optional: list.optional_indices.clone(),
            },
            CelExpr::Map(map) => ExprKind::Map {
                entries: (map.entries.iter())
                    .filter_map(|entry| match &entry.expr {
                        EntryExpr::MapEntry(entry) => {
                            Some((go(&entry.key), go(&entry.value), entry.optional))
                        }
                        EntryExpr::StructField(_) => None,
                    })
                    .collect(),
            },
            CelExpr::Struct(s) => ExprKind::Struct {
                name: s.type_name.clone(),
                fields: (s.entries.iter())
                    .filter_map(|entry| match &entry.expr {
                        EntryExpr::StructField(field) => {
                            Some((field.field.clone(), go(&field.value), field.optional))
                        }
                        EntryExpr::MapEntry(_) => None,
                    })
                    .collect(),
            },
            // The `cel` crate binds `optMap`'s and `optFlatMap`'s target to `@target` and
            // reads it twice; cel-go v0.22 (kube 1.32's) writes the target out twice instead,
            // and evaluates (and costs) it twice: the tree is cel-go's.
            CelExpr::Comprehension(c)
                if c.accu_var == "@target"
                    && c.iter_var == "#unused"
                    && matches!(&c.iter_range.expr, CelExpr::List(l) if l.elements.is_empty()) =>
            {
                return go(&inline(&c.result, "@target", &c.accu_init));
            }
            CelExpr::Comprehension(c) => ExprKind::Comprehension(Box::new(Comprehension {
                range: go(&c.iter_range),
                var: c.iter_var.clone(),
                var2: c.iter_var2.clone(),
                accu: c.accu_var.clone(),
                init: go(&c.accu_init),
                cond: go(&c.loop_cond),
                step: go(&c.loop_step),
                result: go(&c.result),
            })),
        };
        Expr { id: e.id, kind }
    })
}

/// `e` with every reference to `name` replaced by `with`.
fn inline(e: &IdedExpr, name: &str, with: &IdedExpr) -> IdedExpr {
    crate::stack::guard(|| {
        let go = |e: &IdedExpr| inline(e, name, with);
        let expr = match &e.expr {
            CelExpr::Ident(n) if n == name => return with.clone(),
            CelExpr::Select(s) => CelExpr::Select(cel::common::ast::SelectExpr {
                operand: Box::new(go(&s.operand)),
                ..s.clone()
            }),
            CelExpr::Call(c) => CelExpr::Call(cel::common::ast::CallExpr {
                func_name: c.func_name.clone(),
                target: c.target.as_ref().map(|t| Box::new(go(t))),
                args: c.args.iter().map(go).collect(),
            }),
            CelExpr::List(l) => CelExpr::List(cel::common::ast::ListExpr {
                elements: l.elements.iter().map(go).collect(),
                optional_indices: l.optional_indices.clone(),
            }),
            CelExpr::Comprehension(c) => {
                let mut c = (**c).clone();
                c.iter_range = go(&c.iter_range);
                c.accu_init = go(&c.accu_init);
                if c.accu_var != name && c.iter_var != name {
                    c.loop_cond = go(&c.loop_cond);
                    c.loop_step = go(&c.loop_step);
                    c.result = go(&c.result);
                }
                CelExpr::Comprehension(Box::new(c))
            }
            other => other.clone(),
        };
        IdedExpr { id: e.id, expr }
    })
}

impl Expr {
    /// The qualified name this node spells (`a.b.c`), if it is one.
    pub fn qualified_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Ident(name) => Some(name.clone()),
            ExprKind::Select {
                operand,
                field,
                test: false,
            } => operand
                .qualified_name()
                .map(|prefix| format!("{prefix}.{field}")),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_print_as_cel_go_prints_them() {
        let error = parse("self.a +").unwrap_err().to_string();
        assert!(
            error.starts_with("ERROR: <input>:1:9: Syntax error:"),
            "{error}"
        );
        assert!(error.contains("\n | self.a +\n | ........^"), "{error}");
    }

    #[test]
    fn macros_expand_to_comprehensions() {
        let ast = parse("self.all(x, x > 1)").unwrap();
        assert!(matches!(ast.expr.kind, ExprKind::Comprehension(_)));
        assert_eq!(ast.position(ast.expr.id).0, 1);
    }
}
#[cfg(test)]
mod deep {
    /// Parentheses nested as deep as CEL allows parse on a worker thread's stack.
    #[test]
    fn deep_nesting_parses_on_a_small_stack() {
        let rule = format!("{}1{}", "(".repeat(240), ")".repeat(240));
        let parsed = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || super::parse(&rule).is_ok())
            .unwrap()
            .join();
        assert_eq!(parsed.ok(), Some(true));
    }
}
