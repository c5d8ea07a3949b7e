// Server-sent events over `fetch` (EventSource cannot send Authorization): parses the
// `text/event-stream` body of a response into `{id, event, data}` events as they arrive.

/** Calls `onEvent` for each event of `response`'s body, and `onComment` for each comment
 *  line, until it ends. */
export async function readEvents(response, onEvent, onComment) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = { id: null, event: "message", data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let start = 0;
    for (;;) {
      const end = buffer.indexOf("\n", start);
      if (end < 0) break;
      let line = buffer.slice(start, end);
      start = end + 1;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        if (event.data.length) onEvent({ id: event.id, event: event.event, data: event.data.join("\n") });
        event = { id: null, event: "message", data: [] };
        continue;
      }
      if (line.startsWith(":")) { onComment?.(line.slice(1).trim()); continue; }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? "" : line.slice(colon + 1);
      if (val.startsWith(" ")) val = val.slice(1);
      if (field === "data") event.data.push(val);
      else if (field === "id") event.id = val;
      else if (field === "event") event.event = val;
    }
    buffer = buffer.slice(start);
  }
}
