// htmlparser2 is the parser linkedom builds its documents with (pinned in package.json to linkedom's
// version): its tokenizer sees exactly the tags and text linkedom's tree is made of.
// Its Parser is not used here: it keeps its stacks in arrays it shifts at the front, quadratic in depth.
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2'

const noop = () => {}
// Every callback ignores its token: each scan overrides only the few it reads.
const quiet: TokenizerCallbacks = {
  onattribdata: noop,
  onattribentity: noop,
  onattribend: noop,
  onattribname: noop,
  oncdata: noop,
  onclosetag: noop,
  oncomment: noop,
  ondeclaration: noop,
  onend: noop,
  onopentagend: noop,
  onopentagname: noop,
  onprocessinginstruction: noop,
  onselfclosingtag: noop,
  ontext: noop,
  ontextentity: noop,
}

export function tokenize(callbacks: Partial<TokenizerCallbacks>): Tokenizer {
  // The options linkedom's parser gives htmlparser2 for HTML.
  return new Tokenizer({ xmlMode: false, decodeEntities: true }, { ...quiet, ...callbacks })
}

// Headings start a paragraph of plain text and close an open <p> in the tree, so both scans name them.
export const headings = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']
