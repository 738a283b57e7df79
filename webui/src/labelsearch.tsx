// A combobox over /graph/label/search: type, pick with the arrows and Enter, or click.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api";

let counter = 0;

export function LabelSearch({
  label,
  placeholder,
  initial = "",
  onPick,
  onText,
}: {
  label: string;
  placeholder?: string;
  initial?: string;
  onPick: (name: string) => void;
  onText?: (text: string) => void;
}) {
  const [text, setText] = useState(initial);
  const [options, setOptions] = useState<string[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const id = useRef(`labels-${++counter}`).current;

  useEffect(() => {
    const query = text.trim();
    if (!query) {
      setOptions([]);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api<string[]>("GET", `/graph/label/search?q=${encodeURIComponent(query)}&limit=20`, undefined, controller.signal)
        .then((found) => {
          setOptions(found);
          setActive(-1);
        })
        .catch(() => setOptions([]));
    }, 150);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [text]);

  const pick = (name: string) => {
    setText(name);
    setOpen(false);
    onPick(name);
  };

  return (
    <div class="combo">
      <label for={`${id}-input`} class="sr-only">
        {label}
      </label>
      <input
        id={`${id}-input`}
        type="search"
        role="combobox"
        list={undefined}
        aria-expanded={open && options.length > 0}
        aria-controls={`${id}-list`}
        aria-autocomplete="list"
        aria-activedescendant={active >= 0 ? `${id}-${active}` : undefined}
        placeholder={placeholder ?? label}
        value={text}
        autocomplete="off"
        onInput={(e) => {
          setText(e.currentTarget.value);
          onText?.(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") {
            e.preventDefault();
            setOpen(true);
            setActive((a) => Math.min(a + 1, options.length - 1));
          } else if (e.key === "ArrowUp") {
            e.preventDefault();
            setActive((a) => Math.max(a - 1, -1));
          } else if (e.key === "Enter") {
            e.preventDefault();
            const name = active >= 0 ? options[active] : text.trim();
            if (name) pick(name);
          } else if (e.key === "Escape") setOpen(false);
        }}
      />
      {open && options.length > 0 && (
        <ul id={`${id}-list`} role="listbox" class="combo-list">
          {options.map((name, i) => (
            <li
              key={name}
              id={`${id}-${i}`}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(name);
              }}
            >
              {name}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
