/**
 * The sign-in and consent pages of the built-in authorization server: plain server-rendered HTML, no
 * script, nothing loaded from anywhere (one inline style, allowed by its nonce), keyboard-usable
 * (real labels, a real form, the first field focused), and never framed.
 */
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)

export interface Page {
  html: string
  headers: Record<string, string>
}

function page(title: string, body: string, nonce: string): Page {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · toolport</title>
<style nonce="${nonce}">
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=password]{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0}fieldset label{font-weight:400;display:flex;gap:.5rem}
button{font:inherit;padding:.5rem 1rem;margin:.5rem .5rem 0 0;border-radius:6px;border:1px solid #555;cursor:pointer}
button.primary,a.button{background:#1d1d1f;color:#fff}a.button{display:inline-block;padding:.5rem 1rem;border-radius:6px;text-decoration:none}.error{color:#b00020}.muted{color:#555;font-size:.9rem}
:focus-visible{outline:3px solid #0a66c2;outline-offset:2px}
</style></head><body><main>${body}</main></body></html>`
  return {
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
  }
}

export function signInPage(options: {
  action: string
  csrf: string
  client: string
  nonce: string
  /** Sign-in with a toolport key (off when the operator has no keys, only an upstream provider). */
  keyForm?: boolean
  /** Sign-in through the operator's OpenID Connect provider: its name and the link that starts it. */
  upstream?: { name: string; href: string }
  error?: string
}): Page {
  const error = options.error ? `<p class="error" role="alert">${escapeHtml(options.error)}</p>` : ''
  const keyForm =
    options.keyForm === false
      ? ''
      : `<form method="post" action="${escapeHtml(options.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<label for="key">Your toolport key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<p class="muted">The key decides your tenant and the most this client may be given. It is not stored.</p>
<button class="primary" type="submit">Sign in</button>
</form>`
  // A plain link (no script): the provider's page is a top-level navigation, as it must be.
  const upstream = options.upstream
    ? `<p><a class="button" href="${escapeHtml(options.upstream.href)}"${options.keyForm === false ? ' autofocus' : ''}>Sign in with ${escapeHtml(options.upstream.name)}</a></p>`
    : ''
  return page(
    'Sign in',
    `<h1>Sign in to toolport</h1>
<p><strong>${escapeHtml(options.client)}</strong> wants to use toolport on your behalf.</p>${error}
${keyForm}${keyForm && upstream ? '<p class="muted">or</p>' : ''}${upstream}`,
    options.nonce,
  )
}

export const scopeDescriptions: Record<string, string> = {
  'tools:read': 'Read files and call tools that change nothing',
  'tools:write': 'Change files in your workspaces',
  'tools:external': 'Reach the network (web fetches and searches)',
  'tools:destructive': 'Delete files and run commands',
  approver: 'Decide pending approvals',
  admin: 'Manage your tool sources',
  offline_access: 'Stay signed in (refresh tokens)',
  openid: 'Know who you are',
}

export function consentPage(options: {
  action: string
  csrf: string
  client: string
  tenant: string
  scopes: readonly string[]
  nonce: string
}): Page {
  const boxes = options.scopes
    .map(
      (scope, index) =>
        `<label><input type="checkbox" name="scope" value="${escapeHtml(scope)}" checked${index === 0 ? ' autofocus' : ''}> ${escapeHtml(scopeDescriptions[scope] ?? scope)} <span class="muted">(${escapeHtml(scope)})</span></label>`,
    )
    .join('\n')
  return page(
    'Allow access',
    `<h1>Allow ${escapeHtml(options.client)}?</h1>
<p>It asks for this access to tenant <strong>${escapeHtml(options.tenant)}</strong>. Untick what it should not have.</p>
<form method="post" action="${escapeHtml(options.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}">
<fieldset><legend>Access</legend>
${boxes || '<p>Nothing this key may give.</p>'}
</fieldset>
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    options.nonce,
  )
}

/** A sign-in that cannot go on: what went wrong, in the protocol's words, and what to do. */
export function errorPage(error: string, description: string): Page {
  return page(
    'Sign-in failed',
    `<h1>This sign-in cannot go on</h1>
<p class="error" role="alert">${escapeHtml(error)}${description ? `: ${escapeHtml(description)}` : ''}</p>
<p>Start again from the application you were signing in to.</p>`,
    randomNonce(),
  )
}

function randomNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')
}
