import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'

/**
 * The MCP SDK's OAuthClientProvider as a hosted client implements it, kept in memory: it registers
 * itself (dynamic client registration), stores the PKCE verifier and the tokens, and instead of opening
 * a browser hands the authorization URL to the test, which signs the person in.
 */
export class MemoryOAuthClient implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ''
  /** The last authorization URL the SDK asked to open. */
  authorizationUrl: URL | undefined

  constructor(readonly callback: string) {}

  get redirectUrl(): string {
    return this.callback
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'toolport test client',
      redirect_uris: [this.callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }

  clientInformation() {
    return this.information
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }

  tokens() {
    return this.saved
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }

  codeVerifier() {
    return this.verifier
  }
}

/**
 * A browser's cookie jar and redirect handling, enough to walk a server-rendered sign-in: follows
 * redirects by hand (keeping cookies per origin) until one leaves for `stopAt`, and answers that URL.
 * `send` carries each request (default: fetch; the Lambda tests send each one as an event).
 */
export function createCookieWalker(send: (url: URL, init: RequestInit) => Promise<Response> = fetch) {
  const jar = new Map<string, Map<string, string>>()
  const cookieHeader = (url: URL) =>
    [...(jar.get(url.origin) ?? new Map()).entries()].map(([name, value]) => `${name}=${value}`).join('; ')
  const remember = (url: URL, response: Response) => {
    const cookies = jar.get(url.origin) ?? new Map<string, string>()
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const separator = pair.indexOf('=')
      cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim())
    }
    jar.set(url.origin, cookies)
  }
  async function request(
    url: URL,
    init: { method?: string; form?: Record<string, string> | URLSearchParams } = {},
  ): Promise<{ url: URL; response: Response }> {
    const response = await send(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: cookieHeader(url),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    })
    remember(url, response)
    return { url, response }
  }
  return {
    request,
    /** Follows redirects from `start` until the location begins with `stopAt` (answered) or a page (returned). */
    async follow(
      start: URL,
      stopAt: string,
      init?: { method?: string; form?: Record<string, string> | URLSearchParams },
    ) {
      let step = await request(start, init)
      for (let hops = 0; hops < 20; hops++) {
        const location = step.response.headers.get('location')
        if (!location || step.response.status < 300 || step.response.status >= 400) {
          return { done: false as const, url: step.url, html: await step.response.text() }
        }
        const next = new URL(location, step.url)
        if (next.href.startsWith(stopAt)) return { done: true as const, url: next }
        await step.response.arrayBuffer()
        step = await request(next)
      }
      throw new Error('too many redirects')
    },
  }
}

/** The action of the first form of a page, resolved against its URL. */
export function formAction(page: { url: URL; html: string }): URL {
  const action = /<form[^>]*action="([^"]+)"/.exec(page.html)?.[1]
  if (!action) throw new Error(`no form on ${page.url.href}: ${page.html.slice(0, 300)}`)
  return new URL(action.replace(/&amp;/g, '&'), page.url)
}

/** The value of a hidden form field of a page. */
export const hiddenField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ''

type Walk = { done: boolean; url: URL; html?: string }

/**
 * A person at toolport's pages, through `browser` (a fresh cookie walker by default): signs in with
 * `key`, then allows the scopes `keep` picks of those offered, until the redirect to `callback`.
 */
export async function signInWithKey(
  authorizationUrl: URL,
  key: string,
  callback: string,
  keep: (offered: string[]) => string[] = (offered) => offered,
  browser = createCookieWalker(),
): Promise<{
  code: string
  state: string | null
  offered: string[]
  /** Where the browser was sent at the end: the callback with its code. */
  url: URL
  pages: Array<{ url: URL; html: string }>
}> {
  const pages: Array<{ url: URL; html: string }> = []
  let offered: string[] = []
  let page: Walk = await browser.follow(authorizationUrl, callback)
  for (let step = 0; step < 4 && !page.done; step++) {
    const html = page.html ?? ''
    const action = formAction({ url: page.url, html })
    pages.push({ url: page.url, html })
    if (html.includes('name="key"')) {
      page = await browser.follow(action, callback, { method: 'POST', form: { csrf: hiddenField(html, 'csrf'), key } })
    } else {
      offered = [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((match) => match[1] as string)
      page = await allowScopes(browser, page.url, html, keep(offered), callback)
    }
  }
  if (!page.done) {
    const start = page.html?.indexOf('<main>') ?? 0
    throw new Error(`no code at ${page.url.href}: ${page.html?.slice(start, start + 600)}`)
  }
  return {
    code: page.url.searchParams.get('code') ?? '',
    state: page.url.searchParams.get('state'),
    offered,
    url: page.url,
    pages,
  }
}

/** Submits a consent page allowing `scopes`. */
export function allowScopes(
  browser: ReturnType<typeof createCookieWalker>,
  url: URL,
  html: string,
  scopes: readonly string[],
  callback: string,
): Promise<Walk> {
  const form = new URLSearchParams({ csrf: hiddenField(html, 'csrf'), decision: 'allow' })
  for (const scope of scopes) form.append('scope', scope)
  return browser.follow(formAction({ url, html }), callback, { method: 'POST', form })
}

/** A PKCE verifier and its S256 challenge (RFC 7636), as a client makes them for one authorization. */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
  return { verifier, challenge: Buffer.from(digest).toString('base64url') }
}
