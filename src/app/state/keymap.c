/* keymap.c: what a key press means in the current state: the one table of
 * keys, shared by the window and the tests. Keys are characters or APP_KEY_*
 * (state.h), so no SDL is needed here; window.c maps SDL's keycodes to them. */
#include "state.h"
#include "teach.h"

/* Every key the table below gives a meaning, in some state or with some modifier
   (test_state checks that no mapped key is missing here and that each one here is
   mapped; the soak and the fuzzer press them). */
static const int mapped[] = {APP_KEY_UP,
                             APP_KEY_DOWN,
                             APP_KEY_LEFT,
                             APP_KEY_RIGHT,
                             APP_KEY_TAB,
                             APP_KEY_RETURN,
                             APP_KEY_ESCAPE,
                             APP_KEY_BACKSPACE,
                             APP_KEY_PAGEUP,
                             APP_KEY_PAGEDOWN,
                             APP_KEY_F1,
                             APP_KEY_F11,
                             APP_KEY_HOME,
                             APP_KEY_END,
                             APP_KEY_DELETE,
                             'q',
                             '=',
                             '+',
                             '-',
                             '0',
                             's',
                             'u',
                             'v',
                             '?',
                             '/',
                             'r',
                             'm',
                             't',
                             'c',
                             'n',
                             'p',
                             'e',
                             '[',
                             ']',
                             'w',
                             'x',
                             'd',
                             'k',
                             ',',
                             '.',
                             'i',
                             'l',
                             'y',
                             'o',
                             'b',
                             '1',
                             '2',
                             '3',
                             '4',
                             '5',
                             '6',
                             '7',
                             '8',
                             '9',
                             'g'}; /* Space, F5 and A mean something only while a lesson runs
                                      or records (teach.c's app_teach_key) */

const int *app_keys(int *count) {
    *count = (int)(sizeof mapped / sizeof mapped[0]);
    return mapped;
}

app_action app_key_action(const app_state *s, int key, int mods) {
    app_action a = {.kind = ACT_NONE};
    const int ctrl = (mods & APP_MOD_CTRL) != 0, shift = (mods & APP_MOD_SHIFT) != 0;
    if (key >= 'A' && key <= 'Z') key += 'a' - 'A';
    if (s->editing) {
        switch (key) {
        case APP_KEY_RETURN: a.kind = ACT_EDIT_APPLY; break;
        case APP_KEY_ESCAPE: a.kind = ACT_EDIT_CANCEL; break;
        case APP_KEY_BACKSPACE: a.kind = ACT_EDIT_BACKSPACE; break;
        case APP_KEY_DELETE: a.kind = ACT_EDIT_DELETE; break;
        case APP_KEY_LEFT: a.kind = ACT_EDIT_LEFT, a.arg = ctrl; break;
        case APP_KEY_RIGHT: a.kind = ACT_EDIT_RIGHT, a.arg = ctrl; break;
        case APP_KEY_HOME: a.kind = ACT_EDIT_HOME; break;
        case APP_KEY_END: a.kind = ACT_EDIT_END; break;
        case 'u': a.kind = ctrl ? ACT_EDIT_CLEAR : ACT_NONE; break;
        case 'o': a.kind = ctrl ? ACT_EDIT_OPEN : ACT_NONE; break;
        case 'v': a.kind = ctrl ? ACT_EDIT_INSERT : ACT_NONE; break; /* the window pastes */
        }
        return a; /* other keys arrive as typed text */
    }
    if (s->help) { /* keys behind the help overlay only close it (Ctrl+Q still quits) */
        a.kind = ctrl && key == 'q' ? ACT_QUIT : (key ? ACT_ESCAPE : ACT_NONE);
        return a;
    }
    if (app_teach_key(s, key, mods, &a)) return a; /* a lesson's keys, while it runs */
    if (ctrl) {
        if (key == 'q')
            a.kind = ACT_QUIT;
        else if (key == '=' || key == '+')
            a.kind = ACT_ZOOM_IN;
        else if (key == '-')
            a.kind = ACT_ZOOM_OUT;
        else if (key == '0')
            a.kind = ACT_ZOOM_RESET;
        else if (key == 's')
            a.kind = shift ? ACT_SAVE_PANEL : ACT_SAVE;
        else if (key == 'v' && shift)
            a.kind = ACT_SAVE_VIEW_FILE;
        return a;
    }
    if (key == 'h' && s->train_mode) { /* training mode's sweep of h (sweep_view.c) */
        a.kind = ACT_TRAIN_SWEEP;
        return a;
    }
    switch (key) {
    case APP_KEY_UP: a.kind = ACT_H_UP; break;
    case APP_KEY_DOWN: a.kind = ACT_H_DOWN; break;
    case APP_KEY_RIGHT: a.kind = ACT_D_UP; break;
    case APP_KEY_LEFT: a.kind = ACT_D_DOWN; break;
    case APP_KEY_TAB: a.kind = shift ? ACT_SAMPLE_PREV : ACT_SAMPLE_NEXT; break;
    case APP_KEY_RETURN: a.kind = ACT_EDIT_START; break;
    case APP_KEY_PAGEUP: a.kind = shift ? ACT_PINNED_PAGE_PREV : ACT_PAGE_PREV; break;
    case APP_KEY_PAGEDOWN: a.kind = shift ? ACT_PINNED_PAGE_NEXT : ACT_PAGE_NEXT; break;
    case APP_KEY_F1:
    case '?': a.kind = ACT_HELP; break;
    case '/':
        if (shift) a.kind = ACT_HELP;
        break;
    case APP_KEY_F11: a.kind = ACT_FULLSCREEN; break;
    case APP_KEY_ESCAPE: a.kind = ACT_ESCAPE; break;
    case 'r': a.kind = ACT_SEED; break;
    case 'm': a.kind = ACT_MASK; break;
    case 't': a.kind = ACT_THEME; break;
    case 'c': a.kind = ACT_CMAP; break;
    case 'n': a.kind = ACT_SCALE; break;
    case 'p': a.kind = ACT_PRESENT; break;
    case 'e': a.kind = ACT_PAD; break;
    case '[': a.kind = ACT_TEMP_DOWN; break;
    case ']': a.kind = ACT_TEMP_UP; break;
    case 'w': a.kind = ACT_WEIGHTS; break;
    case 'x': a.kind = shift ? ACT_ABLATE_CLEAR : ACT_ABLATE; break;
    case 'd': a.kind = ACT_DIFF; break;
    case 'v': a.kind = ACT_VALUES; break;
    case 'k': a.kind = ACT_CONTRAST; break;
    case ',': a.kind = ACT_STEP_PREV; break;
    case '.': a.kind = ACT_STEP_NEXT; break;
    case 'i': a.kind = ACT_LESSON; break;
    case 'l': a.kind = ACT_TRAIN; break;
    case 'y': a.kind = ACT_TRAIN_LAYER, a.arg = shift ? -1 : 1; break;
    case 'o': a.kind = ACT_OVERVIEW; break;
    case 's': a.kind = ACT_TRAIN_SPEED; break; /* Ctrl+S saves (above) */
    case 'b': a.kind = ACT_COMPARE; break;
    default:
        if (key >= '1' && key <= '9') {
            a.kind = ACT_FOCUS;
            a.arg = key - '0';
        }
    }
    return a;
}
