//! An extension built against a future contract version (`aeterna:extension@0.2.0`): the host
//! must reject it with a clear version error rather than a linker message.

wit_bindgen::generate!({
    inline: "
        package aeterna:extension@0.2.0;

        interface types {
            record message { role: string, content: string }
        }

        world extension {
            use types.{message};
            export register: func() -> string;
            export on-input-messages: func(messages: list<message>) -> list<message>;
        }
    ",
    world: "extension",
});

struct Future;

impl Guest for Future {
    fn register() -> String {
        "future".into()
    }

    fn on_input_messages(messages: Vec<Message>) -> Vec<Message> {
        messages
    }
}

export!(Future);
