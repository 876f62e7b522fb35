__BATON_MARK__
// It runs `baton hook` on OpenCode's plugin events and applies the answer; `baton uninstall`
// removes this file. Edits here are lost on the next install.
import { spawn } from "node:child_process";

const BATON = "__BATON_BINARY__";
const TIMEOUT_MS = __BATON_TIMEOUT_MS__;
const HOST = "__BATON_HOST__";

// One `baton hook` run: the event on stdin, at most one JSON answer on stdout.
function ask(event) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let timer;
    const finish = (answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(answer);
    };
    let child;
    try {
      child = spawn(BATON, ["hook"], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      return finish(null);
    }
    timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
      finish(null);
    }, TIMEOUT_MS);
    child.on("error", () => finish(null));
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("close", () => {
      try { finish(out.trim() ? JSON.parse(out) : null); } catch { finish(null); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

function contextOf(answer) {
  const text = answer && (answer.hookSpecificOutput?.additionalContext ?? answer.additionalContext);
  return typeof text === "string" && text ? text : null;
}

// The session's messages, for baton's handoff (`HandoffFacts`, sent only when baton's
// answer asks for them): the first message and the latest ones, every text clipped, at
// most DIGEST_BYTES in all. Synthetic parts (baton's own brief) are left out.
const DIGEST_MESSAGES = 48;
const DIGEST_BYTES = 192 * 1024;
const TEXT_MAX = 2000;

function clip(text, max) {
  if (typeof text !== "string") return undefined;
  return text.length > max ? text.slice(0, max) + "…" : text;
}

function clipInput(input) {
  if (!input || typeof input !== "object") return undefined;
  const out = {};
  for (const [key, value] of Object.entries(input).slice(0, 16)) {
    if (typeof value === "string") out[key] = clip(value, TEXT_MAX);
    else if (typeof value === "number" || typeof value === "boolean") out[key] = value;
    else if (key === "todos" && Array.isArray(value)) {
      out[key] = value.slice(0, 100).map((t) => ({ id: clip(t?.id, 100), content: clip(t?.content, 500), status: clip(t?.status, 40), priority: clip(t?.priority, 40) }));
    }
  }
  return out;
}

function digest(messages) {
  const picked = messages.length > DIGEST_MESSAGES ? [messages[0], ...messages.slice(1 - DIGEST_MESSAGES)] : messages;
  const out = picked.map((m) => ({
    role: m.info.role,
    id: m.info.id,
    time: m.info.time?.created,
    model: m.info.role === "assistant" ? `${m.info.providerID}/${m.info.modelID}` : undefined,
    cwd: m.info.path?.cwd,
    parts: m.parts
      .slice(-64)
      .filter((p) => (p.type === "text" && !p.synthetic) || p.type === "tool")
      .map((p) => p.type === "text"
        ? { type: "text", text: clip(p.text, TEXT_MAX) }
        : {
            type: "tool", tool: p.tool, callID: p.callID, status: p.state?.status,
            input: clipInput(p.state?.input),
            output: clip(p.state?.output ?? p.state?.error, TEXT_MAX),
            exit: p.state?.metadata?.exit,
          }),
  }));
  // Over the cap: the oldest messages but the first go.
  const sizes = out.map((m) => JSON.stringify(m).length);
  let total = sizes.reduce((a, b) => a + b, 0);
  let drop = 0;
  while (total > DIGEST_BYTES && out.length - drop > 2) total -= sizes[1 + drop++];
  if (drop) out.splice(1, drop);
  return total > DIGEST_BYTES ? [] : out;
}

// A part id in OpenCode's ascending form: prt_, 12 hex digits of time and count, 14 more.
let counter = 0;
function partId() {
  const time = (BigInt(Date.now()) * 4096n + BigInt(counter++ & 0xfff)) & 0xffffffffffffn;
  const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let tail = "";
  for (let i = 0; i < 14; i++) tail += chars[Math.floor(Math.random() * chars.length)];
  return "prt_" + time.toString(16).padStart(12, "0") + tail;
}

export const BatonPlugin = async ({ client, directory }) => {
  const limits = new Map(); // "provider/model" -> the model's limit
  const parents = new Map(); // child session -> parent session
  const created = new Set(); // sessions created in this process
  const started = new Set(); // sessions whose first prompt was seen
  const told = new Map(); // session -> [{ call, message, text }], given again in every request

  const event = (name, session, extra) => ({
    hook_event_name: name,
    session_id: parents.get(session) ?? session,
    agent_id: parents.has(session) ? session : undefined,
    cwd: directory,
    ...extra,
  });

  function report(messages) {
    const reply = messages.findLast((m) => m.info.role === "assistant");
    if (!reply || reply.info.summary) return undefined;
    const tokens = reply.info.tokens ?? {};
    const model = `${reply.info.providerID}/${reply.info.modelID}`;
    const limit = limits.get(model) ?? {};
    return {
      input: tokens.input,
      cache_read: tokens.cache?.read,
      cache_write: tokens.cache?.write,
      output: tokens.output,
      model,
      context_limit: limit.context,
      input_limit: limit.input,
      output_limit: limit.output,
      completed_at: reply.info.time?.completed,
    };
  }

  function apply(session, messages) {
    for (const note of told.get(session) ?? []) {
      for (const m of messages) {
        if (note.message && m.info.id === note.message) {
          m.parts.push({ id: note.id, messageID: m.info.id, sessionID: m.info.sessionID, type: "text", synthetic: true, text: note.text });
        }
        for (const p of m.parts) {
          if (note.call && p.type === "tool" && p.callID === note.call && p.state?.status === "completed") {
            p.state.output = `${p.state.output ?? ""}\n\n${note.text}`;
          }
        }
      }
    }
  }

  return {
    event: async ({ event: e }) => {
      const info = e.properties?.info;
      if (e.type === "session.created" && info?.id) {
        created.add(info.id);
        if (info.parentID) parents.set(info.id, info.parentID);
      } else if (e.type === "session.deleted" && info?.id && !info.parentID) {
        await ask(event("SessionEnd", info.id, { reason: "deleted" }));
      }
    },

    "chat.params": async (input) => {
      const m = input.model;
      if (m?.limit) limits.set(`${m.providerID}/${m.id}`, m.limit);
    },

    "chat.message": async (input, output) => {
      const session = input.sessionID;
      if (started.has(session) || parents.has(session)) return;
      started.add(session);
      const source = created.has(session) ? "startup" : "resume";
      const text = contextOf(await ask(event("SessionStart", session, { source })));
      if (text && output.message) {
        output.parts.push({ id: partId(), messageID: output.message.id, sessionID: session, type: "text", synthetic: true, text });
      }
    },

    "experimental.chat.messages.transform": async (_input, output) => {
      const messages = output.messages;
      const last = messages.at(-1);
      if (!last) return;
      const session = last.info.sessionID;
      const user = messages.findLast((m) => m.info.role === "user");
      const calls = last.info.role === "assistant" ? last.parts.filter((p) => p.type === "tool") : [];
      const call = calls.at(-1);
      const name = call ? "PostToolUse" : "UserPromptSubmit";
      const opencode = { ...(report(messages) ?? {}), host: HOST };
      const answer = await ask(
        event(name, session, {
          prompt_id: user?.info.id,
          tool_name: call?.tool,
          tool_use_id: call?.callID,
          opencode,
        }),
      );
      // baton has just written the CRITICAL handoff: the messages it cannot read, once.
      if (answer?.baton?.send_messages === true) {
        await ask(event("HandoffFacts", session, { opencode, opencode_messages: digest(messages) }));
      }
      if (answer && answer.continue === false) {
        try { await client.tui.showToast({ body: { message: String(answer.stopReason ?? "baton paused the session"), variant: "warning" } }); } catch {}
        try { await client.session.abort({ path: { id: session } }); } catch {}
        return;
      }
      const text = contextOf(answer);
      if (text) {
        const notes = told.get(session) ?? [];
        notes.push(call ? { call: call.callID, text } : { message: last.info.id, id: partId(), text });
        told.set(session, notes);
      }
      apply(session, messages);
    },

    "experimental.session.compacting": async (input) => {
      told.delete(input.sessionID);
      await ask(event("PreCompact", input.sessionID, { trigger: "auto" }));
    },
  };
};
