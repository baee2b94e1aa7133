/** The deck vector checks live with the conformance command, which runs them too. */
export { checkDeckVectors } from '../../ts/conformance/mp-deck.js';
