// Minimal types for mvdan-sh 0.10.1 (a GopherJS build of Go's mvdan.cc/sh/v3/syntax), covering only what
// src/sandbox uses. Nodes are Go structs behind JS wrappers: fields are properties, methods are functions, and
// NodeType() tells the concrete type. Offsets are UTF-8 byte offsets into the parsed text.
declare module 'mvdan-sh' {
  export interface Pos {
    Offset(): number
    Line(): number
    Col(): number
  }

  export interface Node {
    Pos(): Pos
    End(): Pos
  }

  export interface File extends Node {
    Stmts: Stmt[]
  }

  export interface Stmt extends Node {
    Cmd: Node | null
  }

  export interface Lit extends Node {
    Value: string
  }

  export interface SglQuoted extends Node {
    Value: string
    /** True for $'...' (ANSI-C quoting). */
    Dollar: boolean
  }

  export interface DblQuoted extends Node {
    Parts: Node[]
    /** True for $"..." (locale translation). */
    Dollar: boolean
  }

  export interface Word extends Node {
    Parts: Node[]
  }

  export interface Assign extends Node {
    Name: Lit | null
    Value: Word | null
  }

  export interface CallExpr extends Node {
    Assigns: Assign[]
    Args: Word[]
  }

  export interface DeclClause extends Node {
    /** export, local, declare, readonly, typeset or nameref. */
    Variant: Lit
  }

  /** A Go error thrown across the JS boundary; not an instance of Error. */
  export interface GoError {
    Error(): string
  }

  export interface ParserOption {
    readonly __parserOption: never
  }

  export interface Parser {
    /** Throws a GoError when the text is not valid shell. */
    Parse(text: string, name: string): File
  }

  export interface Syntax {
    NewParser(...options: ParserOption[]): Parser
    Variant(language: number): ParserOption
    LangBash: number
    LangPOSIX: number
    NodeType(node: Node): string
    /** Visits nodes depth-first in source order; visit receives null after a node's children. */
    Walk(node: Node, visit: (node: Node | null) => boolean): void
  }

  const sh: { syntax: Syntax }
  export default sh
}
