import type { KeyInput } from 'puppeteer-core'
import { ToolError } from '../../core/errors'
import { call, centre, focusForTyping, resolveRef, selectOptions } from './elements'
import { createFileActions } from './file-actions'
import type { ActionDeps, ClickOptions } from './kit'
import { createRunner, gone } from './runner'
import type { Tab } from './tab'
import { snapshotOf } from './tree'
import type { BrowserSession, PageState, TabInfo } from './types'

type Actions = Omit<BrowserSession, 'id' | 'console'>

const defaultSnapshotChars = 20_000
const settleCapMs = 5_000

function pageTitle(tab: Tab): Promise<string> {
  return tab.page.title().catch(() => '')
}

/** The session's tools as engine calls: each runs alone, under the action deadline, and answers the page's state. */
export function createActions(deps: ActionDeps): Actions {
  const run = createRunner(deps.limits.actionMs, deps.ended, deps.sessionId)

  async function tabList(): Promise<TabInfo[]> {
    return Promise.all(
      deps.tabs().map(async (tab, index) => ({
        index,
        url: tab.page.url(),
        title: await pageTitle(tab),
        current: index === deps.current(),
      })),
    )
  }

  async function state(snapshotChars = defaultSnapshotChars): Promise<PageState> {
    const tab = deps.tab()
    const snapshot = await snapshotOf(tab, snapshotChars)
    // The tab list holds the current tab's title: one CDP round trip per tab, not one more for it.
    const tabs = await tabList()
    return {
      url: tab.page.url(),
      title: tabs[deps.current()]?.title ?? (await pageTitle(tab)),
      snapshot: snapshot.text,
      snapshot_truncated: snapshot.truncated,
      tabs,
      ...deps.drain(),
    }
  }

  /** Does something to the page, lets what it started settle, and answers the new state. */
  function act(work: (tab: Tab) => Promise<void>): Promise<PageState> {
    return run(async () => {
      const tab = deps.tab()
      const since = Date.now()
      await work(tab)
      await tab.quiet(since, settleCapMs)
      // The action may have opened a tab, which is now the current one: let it load too.
      await deps.adopted()
      if (deps.tab() !== tab) await deps.tab().quiet(since, settleCapMs)
      return state()
    })
  }

  async function navigation(go: () => Promise<unknown>): Promise<void> {
    try {
      await go()
    } catch (error) {
      const refused = deps.drain()
      const blocked = refused.blocked.find((request) => request.kind === 'Document')
      if (blocked) {
        throw new ToolError('permission_denied', `Refusing to load ${blocked.url}: ${blocked.reason}.`, {
          hint: 'Only public internet addresses (and hosts the operator opened) can be loaded; file:, chrome: and other schemes are refused.',
          details: { field: 'url', blocked: refused.blocked },
        })
      }
      if (error instanceof Error && /net::ERR_/.test(error.message)) {
        throw new ToolError('connection', `Could not load the page: ${error.message.split(' at ')[0]}.`, {
          hint: 'Check the URL, or try again later if the site is down.',
        })
      }
      throw error
    }
  }

  async function click(tab: Tab, ref: string, options: ClickOptions = {}) {
    const element = await resolveRef(tab, ref)
    const point = await centre(tab, element, ref)
    await tab.page.mouse.click(point.x, point.y, {
      button: options.button ?? 'left',
      count: options.double ? 2 : 1,
    })
  }

  return {
    navigate: (url) =>
      act((tab) => navigation(() => tab.page.goto(url, { waitUntil: 'load', timeout: deps.limits.actionMs }))),
    back: () => act((tab) => navigation(() => tab.page.goBack({ waitUntil: 'load', timeout: deps.limits.actionMs }))),
    state: (snapshotChars) => run(() => state(snapshotChars)),
    location: () =>
      run(async () => {
        const tab = deps.tab()
        return { url: tab.page.url(), title: await pageTitle(tab) }
      }),
    click: (ref, options = {}) => act((tab) => click(tab, ref, options)),
    hover: (ref) =>
      act(async (tab) => {
        const point = await centre(tab, await resolveRef(tab, ref), ref)
        await tab.page.mouse.move(point.x, point.y)
      }),
    type: (ref, text, submit) =>
      act(async (tab) => {
        const element = await resolveRef(tab, ref)
        if (!(await call<boolean>(tab, element, focusForTyping))) {
          throw new ToolError('conflict', `The element ${ref} is not a text field.`, {
            hint: 'Type into a textbox, searchbox or editable element of the snapshot.',
            details: { field: 'ref' },
          })
        }
        // One insertText replaces the selection, like a paste: fast, and fires the input event.
        await tab.cdp.send('Input.insertText', { text })
        if (submit) await tab.page.keyboard.press('Enter')
      }),
    selectOption: (ref, values) =>
      act(async (tab) => {
        const element = await resolveRef(tab, ref)
        const outcome = await call<{ error?: string; labels?: string[] }>(tab, element, selectOptions, values)
        if (outcome.error === 'not a select') {
          throw new ToolError('conflict', `The element ${ref} is not a select.`, {
            hint: 'Use the ref of a combobox or listbox from the snapshot.',
            details: { field: 'ref' },
          })
        }
        if (outcome.error) {
          throw new ToolError('validation', `None of ${JSON.stringify(values)} is an option of ${ref}.`, {
            hint: `Give option values or labels: ${(outcome.labels ?? []).slice(0, 20).join(', ')}.`,
            details: { field: 'values' },
          })
        }
      }),
    pressKey: (key) =>
      act(async (tab) => {
        try {
          await tab.page.keyboard.press(key as KeyInput)
        } catch (error) {
          if (error instanceof Error && /Unknown key/.test(error.message)) {
            throw new ToolError('validation', `${JSON.stringify(key)} is not a key name.`, {
              hint: 'Use a key name such as Enter, Tab, Escape, ArrowDown, PageDown, Backspace or a single character.',
              details: { field: 'key' },
            })
          }
          throw error
        }
      }),
    waitFor: ({ text, textGone, seconds }) =>
      act(async (tab) => {
        const until = Date.now() + Math.min((seconds ?? deps.limits.actionMs / 1000) * 1000, deps.limits.actionMs)
        if (text === undefined && textGone === undefined) {
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())))
          return
        }
        for (;;) {
          // The text of every frame counts: a form in a frame says "Welcome" there.
          const texts = await Promise.all(
            tab.page.frames().map((frame) =>
              // biome-ignore lint/performance/useDomNodeTextContent: visible text is what "appears" means
              frame.evaluate(() => document.body?.innerText ?? '').catch(() => ''),
            ),
          )
          const body = texts.join('\n')
          if ((text === undefined || body.includes(text)) && (textGone === undefined || !body.includes(textGone)))
            return
          if (Date.now() >= until) {
            throw new ToolError(
              'timeout',
              `The text ${JSON.stringify(text ?? textGone)} did not ${text ? 'appear' : 'go'} in time.`,
              {
                hint: 'Check the snapshot for what the page shows, or wait longer (seconds).',
              },
            )
          }
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }),
    scroll: (target) =>
      act(async (tab) => {
        if ('ref' in target) {
          const element = await resolveRef(tab, target.ref)
          await tab.cdp.send('DOM.scrollIntoViewIfNeeded', { backendNodeId: element.backendNodeId })
        } else await tab.page.mouse.wheel({ deltaX: target.x, deltaY: target.y })
      }),
    ...createFileActions(deps, { run, act, click }),
    selectTab: (index) =>
      run(async () => {
        if (!deps.tabs()[index]) throw noTab(index, deps.tabs().length)
        deps.select(index)
        await deps
          .tab()
          .page.bringToFront()
          .catch(() => {})
        return state()
      }),
    closeTab: (index) =>
      run(async () => {
        const tab = deps.tabs()[index]
        if (!tab) throw noTab(index, deps.tabs().length)
        if (deps.tabs().length === 1) {
          throw new ToolError('conflict', 'This is the session’s last tab.', {
            hint: 'Close the whole session with browser_close without tab.',
            details: { field: 'tab' },
          })
        }
        await tab.page.close()
        return state()
      }),
    evaluate: (expression) => run(() => evaluateScript(deps.tab(), expression, deps.limits.actionMs - 500)),
  }
}

/** Errors puppeteer raises for the browser itself, as opposed to what the page's script threw. */
const browserFailures = new Set(['ProtocolError', 'TargetCloseError', 'ConnectionClosedError', 'TimeoutError'])

/**
 * A model's script in the page: its value, or its own failure as the caller's 400 (a throw, a rejected
 * promise, a syntax error, an undefined name), never the browser's 503. A script still running when
 * the action's time is nearly up (an endless loop) is stopped with Runtime.terminateExecution, so the
 * tab answers the session's next action instead of staying busy until it is closed.
 */
async function evaluateScript(tab: Tab, expression: string, withinMs: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const overrun = new Promise<'overrun'>((resolve) => {
    timer = setTimeout(() => resolve('overrun'), Math.max(withinMs, 100))
  })
  try {
    const outcome = await Promise.race([
      tab.page.evaluate(expression).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      overrun,
    ])
    if (outcome === 'overrun') {
      await tab.cdp.send('Runtime.terminateExecution').catch(() => {})
      throw new ToolError('timeout', `The script ran longer than ${Math.round(withinMs / 1000)} s and was stopped.`, {
        hint: 'The session goes on. Make the expression finish sooner (no endless loops, no waiting on slow work).',
        details: { field: 'expression' },
      })
    }
    if ('error' in outcome) throw scriptError(outcome.error)
    return outcome.value === undefined ? null : outcome.value
  } finally {
    clearTimeout(timer)
  }
}

function scriptError(error: unknown): unknown {
  if (error instanceof ToolError) return error
  if (error instanceof Error && (browserFailures.has(error.name) || gone(error))) return error
  // A page's own Error keeps its name and message; anything else thrown is shown as what it is.
  const what =
    error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : (JSON.stringify(error) ?? String(error))
  return new ToolError('validation', `The script failed in the page: ${what.slice(0, 500)}`, {
    hint: 'Fix the expression (it runs as written in the current tab) and call again.',
    details: { field: 'expression' },
  })
}

function noTab(index: number, count: number): ToolError {
  return new ToolError('validation', `There is no tab ${index}; this session has ${count}.`, {
    hint: 'List the tabs with browser_tabs and use an index from it.',
    details: { field: 'index' },
  })
}
